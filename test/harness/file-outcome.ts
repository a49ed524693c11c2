// How test/run.ts counts one suite file from its process: the last "harness <tag>: …" line
// (test/harness/run-suite-file.ts; the tag is the runner's, per process, so a line a test prints, such
// as the output of a runner the test itself runs, is never taken for it) and the exit code. A file that says nothing countable (killed by the
// runner's timeout, crashed before its summary) is one failure, never a silent pass.

export interface FileCounts {
  passed: number;
  failed: number;
  skipped: number;
  notRun: number;
  /** Why the counts are not the file's own summary, for the runner to print. */
  note?: string;
}

/** The summary line's label; run-suite-file.ts reads the tag from HARNESS_SUMMARY_TAG. */
export const summaryLabel = (tag: string | undefined) => (tag ? `harness ${tag}` : 'harness');

export function fileCounts(output: string, exitCode: number | null, tag?: string): FileCounts {
  const label = summaryLabel(tag).replace(/[^\w ]/g, '\\$&');
  const summary = new RegExp(
    `^${label}: (\\d+) passed, (\\d+) failed, (\\d+) skipped, (\\d+) not run$`,
    'gm',
  );
  const last = [...output.matchAll(summary)].at(-1);
  if (!last) {
    return {
      passed: 0,
      failed: 1,
      skipped: 0,
      notRun: 0,
      note: `no harness summary (exit code ${exitCode}): the process was killed or crashed; counted as one failure`,
    };
  }
  const [passed, failed, skipped, notRun] = last.slice(1).map(Number) as [number, number, number, number];
  if (exitCode !== 0 && failed === 0)
    return {
      passed,
      failed: 1,
      skipped,
      notRun,
      note: `exit code ${exitCode} after a summary with no failure`,
    };
  if (exitCode === 0 && failed > 0)
    return { passed, failed, skipped, notRun, note: 'exit code 0 despite failures' };
  return { passed, failed, skipped, notRun };
}
