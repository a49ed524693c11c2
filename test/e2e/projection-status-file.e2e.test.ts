// DATA_DIR/projection-versions.json, the server's report for `projections status` run beside it: cut
// short (a kill or a full disk mid-write, or simply read by the CLI while the server rewrote it in
// place), it made the command fail with JSON's "Unexpected end of JSON input". The server now writes
// it beside and renames it over, and the command reads a report it cannot parse as none, saying so.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LOCK_FILE, lockDataDir } from '../../src/data-dir-lock';
import { VERSIONS_STATUS_FILE } from '../../src/projection/versions';
import { runCli } from '../helpers/cli-process';
import { startTestService } from '../helpers/service';

test('a cut projection-versions.json is read as no report; the server leaves no temporary file', async () => {
  const svc = await startTestService({ demo: false });
  const file = join(svc.dataDir, VERSIONS_STATUS_FILE);
  try {
    const whole = readFileSync(file, 'utf8');
    assert.ok(JSON.parse(whole).projections.length > 0);
    assert.not.ok(existsSync(`${file}.tmp`), 'renamed over, nothing left beside it');

    writeFileSync(file, whole.slice(0, Math.floor(whole.length / 2)));
    const run = await runCli(svc, ['projections', 'status']);
    assert.is(run.code, 0, run.stderr);
    assert.match(run.stdout, 'holds no readable report');
  } finally {
    await svc.close();
  }
});

test("a stopped server's last report is said to be its last, not current; the columns line up", async () => {
  const svc = await startTestService({ demo: false });
  try {
    const running = await runCli(svc, ['projections', 'status']);
    assert.is(running.code, 0, running.stderr);
    assert.match(running.stdout, 'as reported by the server (pid');
    // Every checkpoint line puts its number at the same column, analytics_missed_calls' (22) too.
    const section = (running.stdout.split('checkpoints (')[1] ?? '').split('\n').slice(1).filter(Boolean);
    assert.ok(section.some((l) => l.includes('analytics_missed_calls')));
    assert.is(new Set(section.map((l) => l.length)).size, 1, section.join('\n'));

    // A report whose process is gone (a kill: no stopped_at; a pid above Linux's pid_max).
    const file = join(svc.dataDir, VERSIONS_STATUS_FILE);
    const report = readFileSync(file, 'utf8');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(report), pid: 4_194_305 }));
    const killed = await runCli(svc, ['projections', 'status']);
    assert.match(killed.stdout, 'is no longer running (it ended without stopping');
    // DATA_DIR's lock, when a server took one, says it over the pid (a CLI in another container sees
    // other pids): held, the server runs whatever its pid; free, none does though the pid lives.
    const release = lockDataDir(svc.dataDir);
    const held = await runCli(svc, ['projections', 'status']);
    release();
    assert.match(held.stdout, 'as reported by the server (pid 4194305)');
    writeFileSync(file, report);
    const free = await runCli(svc, ['projections', 'status']);
    assert.match(free.stdout, 'is no longer running (it ended without stopping');
    rmSync(join(svc.dataDir, LOCK_FILE));

    await svc.close({ keepData: true });
    const stopped = await runCli(svc, ['projections', 'status']);
    assert.is(stopped.code, 0, stopped.stderr);
    assert.match(
      stopped.stdout,
      /by a server \(pid \d+\) that stopped at .*: what it was doing then, not now/,
    );
  } finally {
    await svc.close().catch(() => {});
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
});

test.run();
