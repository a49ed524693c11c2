// DATA_DIR/projection-versions.json, the server's report for `projections status` run beside it: cut
// short (a kill or a full disk mid-write, or simply read by the CLI while the server rewrote it in
// place), it made the command fail with JSON's "Unexpected end of JSON input". The server now writes
// it beside and renames it over, and the command reads a report it cannot parse as none, saying so.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
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

test.run();
