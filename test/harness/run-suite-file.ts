// One suite file's process, spawned by test/run.ts: what uvu's bin.js does (load the file, run its
// suites), with the guard of guarded-uvu.ts on every suite, a file that fails to load reported as a
// failure, and a last line run.ts counts from (test/harness/file-outcome.ts):
//   harness <HARNESS_SUMMARY_TAG>: N passed, N failed, N skipped, N not run
// "not run" counts queued tests the process never reached (it stopped in the middle of the file).
// Usage: node --import tsx test/harness/run-suite-file.ts <file>
import { register } from 'node:module';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

register('./uvu-redirect.ts', import.meta.url);

declare global {
  var UVU_DEFER: number | undefined;
  var UVU_INDEX: number | undefined;
  var UVU_QUEUE: unknown[][];
}

const file = resolve(process.argv[2] ?? '');
// uvu queues suites for exec() instead of running them on a timer when it finds UVU_DEFER.
globalThis.UVU_DEFER = 1;
const { exec, tally } = await import('./guarded-uvu');
const { headline, fullDescription } = await import('./printable-failure');
const { summaryLabel } = await import('./file-outcome');
globalThis.UVU_INDEX = 0;
globalThis.UVU_QUEUE.push([relative(process.cwd(), file)]);

let finished = false;
const summary = (extraFailed: number, notRun: number) =>
  `${summaryLabel(process.env.HARNESS_SUMMARY_TAG)}: ${tally.passed} passed, ${tally.failed + tally.outside.length + extraFailed} failed, ${tally.skipped} skipped, ${notRun} not run`;

// A test that never settles (the event loop empties), process.exit(), an uncaught error mid-file or
// the runner's stop signal (SIGUSR2).
process.on('exit', () => {
  if (finished) return;
  const inFlight = tally.current === undefined ? 0 : 1;
  const notRun = Math.max(0, tally.queued - tally.passed - tally.failed - inFlight);
  const where = tally.current === undefined ? 'between tests' : `during "${tally.current}"`;
  process.stdout.write(`\n[harness] the process stopped ${where}, before its tests finished\n`);
  process.stdout.write(`${summary(Math.max(1, inFlight), notRun)}\n`);
  process.exitCode = 1;
});

// The runner's time limit (test/run.ts): the exit handler above says where it stopped. SIGUSR2, not
// SIGTERM: tests emit SIGTERM and SIGINT in-process to check the CLI's own handlers, which this must not take.
process.once('SIGUSR2', () => {
  process.stdout.write('\n[harness] SIGUSR2: the runner stopped this file (TEST_FILE_TIMEOUT_MS)\n');
  process.exit(1);
});

let loaded = true;
try {
  await import(pathToFileURL(file).href);
} catch (e) {
  loaded = false;
  process.stdout.write(
    `\n  FAIL  ${relative(process.cwd(), file)} could not be loaded: no test of it ran\n    ${headline(e)}\n\n${fullDescription(e)}\n`,
  );
}

let unguarded = 0;
if (loaded) {
  // uvu's queue holds the file's name, then one runner per suite that called run().
  unguarded = (globalThis.UVU_QUEUE[0]?.length ?? 1) - 1 - tally.suites;
  await exec();
  // exec() sets the exit code from what uvu saw; failures the guard did not count are still failures.
  if (process.exitCode && tally.failed === 0) unguarded = Math.max(unguarded, 1);
}
if (unguarded > 0)
  process.stdout.write(
    `\n  FAIL  ${unguarded} suite(s) reached uvu without test/harness/guarded-uvu.ts (uvu imported by another path?): their counts are uvu's own above\n`,
  );
for (const failure of tally.outside) {
  process.stdout.write(
    `\n  FAIL  ${failure.message}\n\n${(failure as { details?: string }).details ?? ''}\n`,
  );
}
// A .only left in a commit would skip the rest of the file in CI without failing it.
const inCi = [process.env.CI, process.env.REQUIRE_BROWSER].some((v) => v && v !== '0' && v !== 'false');
const refusedOnly = inCi && tally.focused.length > 0 ? 1 : 0;
if (refusedOnly)
  process.stdout.write(
    `\n  FAIL  .only in CI: ${tally.focused.map((t) => `"${t}"`).join(', ')} (the file's other tests were skipped)\n`,
  );
finished = true;
const notRun = loaded ? Math.max(0, tally.queued - tally.passed - tally.failed) : 0;
const failed = (loaded ? 0 : 1) + Math.max(0, unguarded) + refusedOnly;
process.stdout.write(`\n${summary(failed + (notRun ? 1 : 0), notRun)}\n`);
process.exitCode = tally.failed + tally.outside.length + failed + notRun > 0 ? 1 : 0;
