// A newcomer's path, as processes: a clean clone, the README's start command, a curl with the printed
// key; the operator CLI on the same data while the server runs; SIGTERM.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const repo = resolve(new URL('../..', import.meta.url).pathname);

/** Waits for `pattern` in a child's output; `timeoutMs` is a hang bound (a loaded machine is slow). */
function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs = 120_000): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      out += d.toString();
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolvePromise(out);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!pattern.test(out)) reject(new Error(`exited ${code} before ${pattern}; output:\n${out}`));
    });
  });
}

const exited = (child: ChildProcess, timeoutMs = 120_000) =>
  new Promise<number | null>((res, rej) => {
    if (child.exitCode !== null) return res(child.exitCode);
    const timer = setTimeout(() => rej(new Error('did not exit')), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      res(code);
    });
  });

function cli(cwd: string, env: NodeJS.ProcessEnv, args: string[]): string {
  return execFileSync('npm', ['run', '--silent', 'cli', '--', ...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

test('clean clone → README start command → curl with the printed key → CLI → SIGTERM', async () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const quick = /## Quick start[\s\S]*?```(?:sh|bash)?\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const commands = quick
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  assert.equal(commands, ['npm ci && npm start', 'npm test'], 'the quick start is exactly two commands');

  const dir = mkdtempSync(join(tmpdir(), 'couvert-clone-'));
  const clone = join(dir, 'couvert');
  // The servers started below, killed at the end if a failure left them running (else they outlive
  // the suite, holding its process open and their data directory).
  const children: { child: ChildProcess; group: boolean }[] = [];
  try {
    execFileSync('git', ['clone', '--quiet', '--depth', '1', `file://${repo}`, clone]);
    // `npm ci` itself runs in CI on a clean checkout; here the installed modules are reused to keep this fast.
    symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules'));
    assert.ok(existsSync(join(clone, '.ci/run')), '.ci/run is committed');
    const env = {
      ...process.env,
      PORT: '0',
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'warn',
      BOOTSTRAP_FILE: '',
    };
    const server = spawn('npm', ['start'], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      const out = await waitForOutput(
        server,
        /curl -s -H "Authorization: Bearer (couvert_pk_[A-Za-z0-9_-]+)" (http:\S+)/,
      );
      const [, token, meUrl] =
        /curl -s -H "Authorization: Bearer (couvert_pk_[A-Za-z0-9_-]+)" (http:\S+)/.exec(
          out,
        ) as RegExpExecArray;
      const me = await fetch(meUrl as string, { headers: { authorization: `Bearer ${token}` } });
      assert.is(me.status, 200);
      const body = (await me.json()) as { data: { restaurant: { id: string }; scopes: string[] } };
      assert.is(body.data.restaurant.id, 'rest_demo');
      assert.ok(body.data.scopes.includes('RESERVATIONS_WRITE'), 'the demo key holds every scope');
      assert.ok((token as string).length >= 'couvert_pk_'.length + 43, 'at least 32 random bytes');

      // The operator creates and revokes a key from another process while the server runs.
      const created = cli(clone, env, [
        'keys',
        'create',
        '--restaurant',
        'rest_demo',
        '--name',
        'POS',
        '--scopes',
        'CATALOG_READ',
      ]);
      const [, keyId, newToken] = /key (\S+) created\. Token \(shown once\): (\S+)/.exec(
        created,
      ) as RegExpExecArray;
      const base = (meUrl as string).replace(/\/me$/, '');
      assert.is(
        (await fetch(`${base}/me`, { headers: { authorization: `Bearer ${newToken}` } })).status,
        200,
      );
      const listed = cli(clone, env, ['keys', 'list', '--restaurant', 'rest_demo']);
      assert.ok(listed.includes(keyId as string));
      assert.not.ok(listed.includes(newToken as string), 'keys list never shows a token');
      cli(clone, env, ['keys', 'revoke', '--id', keyId as string]);
      const revoked = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${newToken}` } });
      assert.is(revoked.status, 401, 'a key revoked by another process fails on the very next request');

      const help = cli(clone, env, ['--help']);
      for (const c of [
        'restaurants create',
        'restaurants suspend',
        'keys create',
        'keys revoke',
        'bootstrap apply',
        'read-models rebuild',
      ])
        assert.ok(help.includes(c), `--help lists ${c}`);

      // Ctrl-C in a terminal signals the whole process group (npm, tsx and the server).
      process.kill(-(server.pid as number), 'SIGINT');
      await exited(server);
      await fetch(`${base}/me`).then(
        () => assert.unreachable('the server still answers after SIGINT'),
        () => undefined,
      );
    } finally {
      try {
        process.kill(-(server.pid as number), 'SIGKILL');
      } catch {
        // the group is already gone
      }
    }

    // As in the container (Dockerfile CMD): node is the process that gets SIGTERM, and exits 0 once
    // in-flight requests are done and the stores are closed.
    const direct = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push({ child: direct, group: false });
    let out = '';
    direct.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    direct.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await waitForOutput(direct, /listening on/);
    direct.kill('SIGTERM');
    const code = await exited(direct);
    assert.is(
      code,
      0,
      `SIGTERM stops cleanly with exit code 0 (signal ${direct.signalCode}); output:\n${out}`,
    );
    assert.match(out, /SIGTERM received, finishing in-flight requests/);
    assert.match(out, /its key was printed when it was created/, 'a restart keeps the demo data');

    const bad = spawn('npm', ['start'], {
      cwd: clone,
      env: { ...env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push({ child: bad, group: true });
    const msg = await waitForOutput(bad, /PORT/);
    assert.match(msg, /configuration error: PORT must be an integer/);
    assert.is.not(await exited(bad), 0);
  } finally {
    for (const { child, group } of children)
      if (child.exitCode === null && child.signalCode === null) {
        try {
          // npm's whole process group (npm, tsx, the server), or node itself.
          process.kill(group ? -(child.pid as number) : (child.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
