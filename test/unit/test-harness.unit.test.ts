// The test runner itself (test/run.ts, test/harness/): it runs suites written to a temporary directory
// that throw every kind of value, fail in hooks, fail to load or stop half way, and checks each failure
// is reported with its message and details, counted once, and that the suites' other tests still run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const errorsUrl = pathToFileURL(join(root, 'src/core/errors.ts')).href;
const assertUrl = import.meta.resolve('uvu/assert');
// uvu's own module by its path ('uvu' here is the runner's guard): the same suites run under a runner
// that does not redirect uvu.
const uvuUrl = new URL('../dist/index.mjs', assertUrl).href;

const header = `import { suite } from '${uvuUrl}';
import * as assert from '${assertUrl}';
import { ApiError, validationError } from '${errorsUrl}';
`;

const suites: Record<string, string> = {
  'thrown.test.ts': `${header}
const s = suite('thrown');
s('passes first', () => {});
s('ApiError with details', () => {
  throw validationError([{ path: 'partySize', code: 'too_big', message: 'at most 12' }], 'Party too large');
});
s('error whose message is an object', () => {
  const e = new Error('x');
  (e as unknown as { message: unknown }).message = { nested: 'object-message' };
  throw e;
});
s('plain object', () => {
  throw { code: 'plain-object-code' };
});
s('null', () => {
  throw null;
});
s('undefined', () => Promise.reject(undefined));
s('string', () => {
  throw 'a-thrown-string';
});
s('symbol', () => {
  throw Symbol('a-thrown-symbol');
});
s('error whose getters throw', () => {
  const e = new Error('hidden');
  // 'stack' first: V8 formats a stack (reading name and message) when it is redefined.
  for (const key of ['stack', 'message', 'name', 'details'])
    Object.defineProperty(e, key, { get() { throw new Error('getter ' + key); }, enumerable: true });
  throw e;
});
s('proxy whose every trap throws', () => {
  const trap = () => { throw new Error('trap'); };
  throw new Proxy({}, { get: trap, has: trap, ownKeys: trap, getPrototypeOf: trap, getOwnPropertyDescriptor: trap });
});
s('AggregateError', () => {
  throw new AggregateError([new Error('first-inner'), new ApiError(409, 'RESOURCE_CONFLICT', 'second-inner', { slot: 'inner-slot' })], 'several-at-once');
});
s('error with a cause', () => {
  throw new Error('outer-error', { cause: new ApiError(404, 'RESOURCE_NOT_FOUND', 'the-cause', { id: 'cause-id' }) });
});
s('uvu assertion', () => {
  assert.is(1, 2);
});
s('passes last', () => {});
s.run();

const t = suite('next suite of the file');
t('still runs', () => {});
t.run();
`,
  'hooks.test.ts': `${header}
const b = suite('before fails');
b.before(() => {
  throw new ApiError(500, 'INTERNAL_ERROR', 'before-hook-broke', { step: 'before-details' });
});
b('first', () => {});
b('second', () => {});
b.run();

const e = suite('after each fails too');
e.after.each(() => {
  throw new ApiError(500, 'INTERNAL_ERROR', 'after-each-broke', { step: 'after-each-details' });
});
e('fails itself', () => {
  throw new ApiError(400, 'VALIDATION_ERROR', 'test-itself-broke', { step: 'test-details' });
});
e('fails only in the hook', () => {});
e.run();

const a = suite('after fails');
a('passes', () => {});
a.after(() => {
  throw { after: 'after-hook-object' };
});
a.run();

const ok = suite('later suite');
ok('passes', () => {});
ok.skip('skipped', () => {});
ok.run();
`,
  'syntax.test.ts': `${header}
const = ;
`,
  'top-level.test.ts': `${header}
const s = suite('registered before the throw');
s('never runs', () => {});
s.run();
throw validationError([{ path: 'top', code: 'top-level-code', message: 'thrown at load' }], 'top-level-throw');
`,
  'stops.test.ts': `${header}
const s = suite('stops');
s('passes', () => {});
s('never settles, and nothing else keeps the process alive', () => new Promise(() => {}));
s('never reached', () => {});
s.run();
`,
  'fine.test.ts': `${header}
const s = suite('fine');
s('passes', () => assert.ok(true));
s.run();
`,
};

interface Run {
  status: number | null;
  output: string;
}

function runRunner(files: Record<string, string>, env: Record<string, string> = {}): Run {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-harness-'));
  try {
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'test/run.ts')], {
      cwd: root,
      env: { ...process.env, COUVERT_TEST_DIR: dir, TEST_CONCURRENCY: '2', TEST_VERBOSE: '', ...env },
      encoding: 'utf8',
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The runner's line for one file, without its path and time: "FAIL 1 passed, 2 failed, 0 skipped". */
function fileLine(output: string, name: string): string {
  const line = output
    .split('\n')
    .map((l) => /^(FAIL|ok) +\S+\/([^/ ]+) {2}(.*?) \(\d+\.\d s\)$/.exec(l))
    .find((m) => m?.[2] === name);
  if (!line) shows(output, `${name}  `);
  assert.ok(line);
  return `${line[1]} ${line[3]}`;
}

/** The runner's whole output goes to a file, not into the failure: it holds "N passed" lines of its own. */
function shows(output: string, text: string | RegExp) {
  if (typeof text === 'string' ? output.includes(text) : text.test(output)) return;
  const saved = join(mkdtempSync(join(tmpdir(), 'couvert-harness-output-')), 'output.txt');
  writeFileSync(saved, output);
  assert.unreachable(`the runner's output (${saved}) does not show ${String(text)}`);
}

const runner = suite('test/run.ts');
const all = runRunner(suites);

runner('each thrown value is one failure of its test, and the tests after it still run', () => {
  // 12 failing tests, 2 passing, and the file's next suite.
  assert.is(fileLine(all.output, 'thrown.test.ts'), 'FAIL 3 passed, 12 failed, 0 skipped');
});

runner('each thrown value is printed with its message and details', () => {
  for (const shown of [
    'ApiError: Party too large',
    "issues: [ { path: 'partySize', code: 'too_big', message: 'at most 12' } ]",
    'status: 400',
    "nested: 'object-message'",
    "code: 'plain-object-code'",
    'null was thrown',
    'undefined was thrown',
    'a string was thrown: a-thrown-string',
    'Symbol(a-thrown-symbol)',
    'Error: [message getter threw]',
    'details: [getter threw]',
    'object: [message getter threw]',
    'AggregateError: several-at-once',
    'first-inner',
    'second-inner',
    "slot: 'inner-slot'",
    'Error: outer-error',
    '[cause]: ApiError: the-cause',
    "id: 'cause-id'",
    'Expected values to be strictly equal',
    '--1    (Actual)',
  ])
    shows(all.output, shown);
  // The stack of a thrown error is printed, down to the suite's line.
  shows(all.output, /at .*thrown\.test\.ts:\d+/);
});

runner('a failing hook is reported with its message, and the file’s other suites still run', () => {
  // before: both tests of its suite fail; after.each: one failure per test with every message; after:
  // one failure of its own; the later suite passes and skips.
  assert.is(fileLine(all.output, 'hooks.test.ts'), 'FAIL 2 passed, 5 failed, 1 skipped');
  for (const shown of [
    'before hook (no test of this suite ran): ApiError: before-hook-broke',
    "step: 'before-details'",
    'not run: its suite’s before hook failed',
    'test: ApiError: test-itself-broke; after.each hook: ApiError: after-each-broke',
    "step: 'test-details'",
    "step: 'after-each-details'",
    'after.each hook: ApiError: after-each-broke',
    'after hook of suite "after fails": Object was thrown',
    "after: 'after-hook-object'",
  ])
    shows(all.output, shown);
});

runner('a file that fails to load is one failure, with its error', () => {
  assert.is(fileLine(all.output, 'syntax.test.ts'), 'FAIL 0 passed, 1 failed, 0 skipped');
  shows(all.output, 'syntax.test.ts could not be loaded: no test of it ran');
  assert.is(fileLine(all.output, 'top-level.test.ts'), 'FAIL 0 passed, 1 failed, 0 skipped');
  shows(all.output, 'ApiError: top-level-throw');
  shows(all.output, "code: 'top-level-code'");
});

runner('a file that stops in the middle counts the test it stopped in and the tests it never reached', () => {
  assert.is(fileLine(all.output, 'stops.test.ts'), 'FAIL 1 passed, 1 failed, 0 skipped, 1 not run');
  shows(all.output, 'stopped during "stops › never settles, and nothing else keeps the process alive"');
});

runner('the last line adds up every file, and the runner fails', () => {
  assert.is(fileLine(all.output, 'fine.test.ts'), 'ok 1 passed, 0 failed, 0 skipped');
  const last = all.output.trimEnd().split('\n').at(-1);
  assert.is(last, '7 passed, 20 failed, 1 skipped, 1 not run');
  assert.is(all.status, 1);
});

runner('a passing file passes', () => {
  const fine = runRunner({ 'fine.test.ts': suites['fine.test.ts']! });
  assert.is(fine.output.trimEnd().split('\n').at(-1), '1 passed, 0 failed, 0 skipped');
  assert.is(fine.status, 0);
});

runner('a test failed by its suite’s before hook is not blamed for a later stop', () => {
  const r = runRunner({
    'before-then-stop.test.ts': `${header}
const b = suite('before fails');
b.before(() => {
  throw new Error('before-hook-broke');
});
b('counted once', () => {});
b.run();

const h = suite('stops in its before hook');
h.before(() => new Promise(() => {}));
h('never reached', () => {});
h.run();
`,
  });
  // One failure from the before hook, one for the stop, which was not inside any test.
  assert.is(fileLine(r.output, 'before-then-stop.test.ts'), 'FAIL 0 passed, 2 failed, 0 skipped, 1 not run');
  shows(r.output, 'the process stopped between tests');
});

runner('a before hook that throws in a suite whose every test is skipped is one failure', () => {
  const r = runRunner({
    'before-all-skipped.test.ts': `${header}
const s = suite('all skipped');
s.before(() => {
  throw new Error('lonely-before-broke');
});
s.skip('skipped', () => {});
s.run();
`,
  });
  assert.is(fileLine(r.output, 'before-all-skipped.test.ts'), 'FAIL 0 passed, 1 failed, 1 skipped');
  shows(r.output, 'before hook of suite "all skipped" (no test of it queued): Error: lonely-before-broke');
  assert.is(r.status, 1);
});

runner('a file past the runner’s time limit says which test it was stopped in, and its counts', () => {
  const r = runRunner(
    {
      'too-long.test.ts': `${header}
const s = suite('too long');
s('passes', () => {});
s('waits forever on a live timer', () => new Promise(() => { setInterval(() => {}, 60_000); }));
s('never reached', () => {});
s.run();
`,
    },
    // Only bounds the run: long enough for the file to load on a loaded machine.
    { TEST_FILE_TIMEOUT_MS: '8000' },
  );
  assert.is(fileLine(r.output, 'too-long.test.ts'), 'FAIL 1 passed, 1 failed, 0 skipped, 1 not run');
  shows(r.output, 'stopped during "too long › waits forever on a live timer"');
});

runner('a committed .only fails the run in CI, and only there', () => {
  const files = {
    'only.test.ts': `${header}
const s = suite('focused');
s.only('the focused one', () => {});
s('left out', () => {});
s.run();
`,
  };
  const ci = runRunner(files, { CI: 'true', REQUIRE_BROWSER: '' });
  assert.is(fileLine(ci.output, 'only.test.ts'), 'FAIL 1 passed, 1 failed, 1 skipped');
  shows(ci.output, '.only in CI: "focused › the focused one"');
  assert.is(ci.status, 1);
  const browser = runRunner(files, { CI: '', REQUIRE_BROWSER: '1' });
  assert.is(fileLine(browser.output, 'only.test.ts'), 'FAIL 1 passed, 1 failed, 1 skipped');
  const local = runRunner(files, { CI: '', REQUIRE_BROWSER: '' });
  assert.is(fileLine(local.output, 'only.test.ts'), 'ok 1 passed, 0 failed, 1 skipped');
});

runner.run();
