// How the runner counts one suite file from its output and exit code (test/harness/file-outcome.ts).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fileCounts } from '../harness/file-outcome';

const counts = suite('fileCounts');

counts('the file’s own last summary line, by its tag', () => {
  const output = [
    'harness t1: 1 passed, 0 failed, 0 skipped, 0 not run',
    'harness t1: 3 passed, 2 failed, 1 skipped, 4 not run',
    // printed by a test after the summary (a runner the test runs): not this file's
    'harness aaa: 9 passed, 0 failed, 0 skipped, 0 not run',
    'harness: 8 passed, 0 failed, 0 skipped, 0 not run',
  ].join('\n');
  assert.equal(fileCounts(output, 1, 't1'), { passed: 3, failed: 2, skipped: 1, notRun: 4 });
});

counts('no summary of its own (killed, crashed) is one failure', () => {
  const c = fileCounts('harness other: 5 passed, 0 failed, 0 skipped, 0 not run\n', null, 't1');
  assert.equal([c.passed, c.failed, c.skipped, c.notRun], [0, 1, 0, 0]);
  assert.match(c.note ?? '', 'no harness summary');
});

counts('a failing exit code after a summary without failures is one failure', () => {
  const c = fileCounts('harness t1: 5 passed, 0 failed, 0 skipped, 0 not run\n', 1, 't1');
  assert.equal([c.passed, c.failed], [5, 1]);
  assert.ok(c.note);
});

counts.run();
