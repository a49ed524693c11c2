// What `import … from 'uvu'` gives a suite file run by test/run.ts (test/harness/uvu-redirect.ts points
// the specifier here). The same `suite`, `test` and `exec`, except that nothing a test or hook throws
// reaches uvu as is:
// - a test's before.each hooks, the test and its after.each hooks run as one uvu test, and whatever
//   they throw reaches uvu as one printable failure (uvu's runner would stop the suite silently on an
//   after.each that throws once the test failed);
// - a before hook that throws fails each test of its suite with its message (uvu would end the suite
//   without a word), or counts one failure of its own in a suite with no test queued; an after hook
//   that throws is reported and counted after the suites (uvu would drop the file's other suites and
//   its summary).
// It also counts what ran, for the summary line test/harness/run-suite-file.ts prints.
import * as uvu from 'uvu';
import { combinedFailure, PrintableFailure, printableFailure } from './printable-failure';

type Test<T> = uvu.Test<T>;
type Callback<T> = uvu.Callback<T>;
type Crumbs = Parameters<Callback<object>>[0];

export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
  /** Tests of the suites that called run(): what uvu will run. */
  queued: number;
  /** Suites that called run() through the guard, to catch one that reached uvu another way. */
  suites: number;
  /** "suite › test" while a test runs, for a process that stops in the middle of one. */
  current: string | undefined;
  /** Failures outside any test (an after hook), printed after uvu's report. */
  outside: Error[];
  /** "suite › test" of each test.only, which CI refuses (run-suite-file.ts). */
  focused: string[];
}

export const tally: Tally = {
  passed: 0,
  failed: 0,
  skipped: 0,
  queued: 0,
  suites: 0,
  current: undefined,
  outside: [],
  focused: [],
};

/** The hooks and tests registered until the next run() (uvu starts a fresh context at run()). */
interface Round<T> {
  tests: number;
  only: number;
  skips: number;
  beforeEach: Callback<T>[];
  afterEach: Callback<T>[];
  beforeFailed: boolean;
  beforeReported: boolean;
  beforeError: unknown;
}

const newRound = <T>(): Round<T> => ({
  tests: 0,
  only: 0,
  skips: 0,
  beforeEach: [],
  afterEach: [],
  beforeFailed: false,
  beforeReported: false,
  beforeError: undefined,
});

/** One test with its before.each and after.each hooks, counted as passed or failed. */
async function runCounted<T>(fn: Callback<T>, ctx: T & Crumbs, r: Round<T>): Promise<void> {
  if (r.beforeFailed) {
    tally.failed++;
    if (r.beforeReported)
      throw new PrintableFailure('not run: its suite’s before hook failed (reported above)', '');
    r.beforeReported = true;
    throw printableFailure(r.beforeError, 'before hook (no test of this suite ran)');
  }
  const parts: { context: string; value: unknown }[] = [];
  let stage = 'before.each hook';
  try {
    for (const hook of r.beforeEach) await hook(ctx);
    stage = '';
    await fn(ctx);
  } catch (e) {
    parts.push({ context: stage, value: e });
  }
  for (const hook of r.afterEach) {
    try {
      await hook(ctx);
    } catch (e) {
      parts.push({ context: 'after.each hook', value: e });
    }
  }
  if (parts.length === 0) {
    tally.passed++;
    return;
  }
  tally.failed++;
  throw combinedFailure(parts);
}

function guard<T>(real: Test<T>, title: string): Test<T> {
  let round = newRound<T>();

  const wrap =
    (name: string, fn: Callback<T>, r: Round<T>) =>
    async (ctx: T & Crumbs): Promise<void> => {
      tally.current = title ? `${title} › ${name}` : name;
      // Counted here, so no longer "current": a later stop must not count it again.
      try {
        await runCounted(fn, ctx, r);
      } finally {
        tally.current = undefined;
      }
    };

  const t = ((name: string, fn: Callback<T>) => {
    round.tests++;
    real(name, wrap(name, fn, round));
  }) as Test<T>;
  t.only = (name, fn) => {
    round.only++;
    tally.focused.push(title ? `${title} › ${name}` : name);
    real.only(name, wrap(name, fn, round));
  };
  t.skip = (...args) => {
    round.skips++;
    real.skip(...args);
  };
  const before = ((hook: Callback<T>) => {
    const r = round;
    real.before(async (ctx) => {
      if (r.beforeFailed) return; // uvu runs no later before hook either
      try {
        await hook(ctx);
      } catch (e) {
        r.beforeFailed = true;
        r.beforeError = e;
        // No test will report it (every one skipped): uvu runs before hooks all the same.
        if ((r.only || r.tests) === 0)
          tally.outside.push(printableFailure(e, `before hook of suite "${title}" (no test of it queued)`));
      }
    });
  }) as Test<T>['before'];
  before.each = (hook) => {
    round.beforeEach.push(hook);
  };
  const after = ((hook: Callback<T>) => {
    real.after(async (ctx) => {
      try {
        await hook(ctx);
      } catch (e) {
        tally.outside.push(printableFailure(e, `after hook of suite "${title}"`));
      }
    });
  }) as Test<T>['after'];
  after.each = (hook) => {
    round.afterEach.push(hook);
  };
  t.before = before;
  t.after = after;
  t.run = () => {
    const r = round;
    tally.suites++;
    tally.queued += r.only ? r.only : r.tests;
    tally.skipped += (r.only ? r.tests : 0) + r.skips;
    round = newRound<T>();
    real.run();
  };
  return t;
}

export function suite<T = Record<string, unknown>>(title = '', context?: T): Test<T> {
  return guard(uvu.suite<T>(title, context), title);
}

export const test = guard(uvu.test, '');
export const exec = uvu.exec;
