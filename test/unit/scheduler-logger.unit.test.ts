// node-cron's own messages (a run skipped while the previous one runs, a run missed while the event
// loop was held) reach the service's log as JSON lines naming the job, not node-cron's coloured text
// on the console among them.
import cron from 'node-cron';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Runtime } from '../../src/runtime';
import { registerScheduledJob, startScheduler } from '../../src/scheduler';
import { captureLog } from '../helpers/log-sink';

test("a job's node-cron messages go through the runtime's logger", async () => {
  registerScheduledJob({ name: 'logger-probe', schedule: '0 0 1 1 *', run: async () => null });
  const { lines, logger } = captureLog();
  const printed: unknown[] = [];
  const { warn, error } = console;
  console.warn = (...a: unknown[]) => printed.push(a);
  console.error = (...a: unknown[]) => printed.push(a);
  const scheduler = startScheduler({ logger } as unknown as Runtime, {});
  try {
    const task = [...cron.getTasks().values()].find((t) => t.name === 'logger-probe');
    assert.ok(task, 'the job is scheduled under its name');
    // What node-cron's runner calls on a missed run and on an overlap (node-cron 4: the task's logger).
    const cronLog = (task as unknown as { logger: { warn(m: string): void; error(m: Error): void } }).logger;
    cronLog.warn('missed execution at Mon Jan 01 2026! Possible blocking IO');
    cronLog.error(new Error('boom'));
  } finally {
    console.warn = warn;
    console.error = error;
    await scheduler.stop();
  }
  await new Promise((r) => setImmediate(r));
  assert.equal(printed, [], 'nothing on the console');
  const parsed = lines
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  assert.equal(
    parsed.map((l) => [l.level, l.job, l.scheduler, l.msg]),
    [
      [40, 'logger-probe', 'node-cron', 'missed execution at Mon Jan 01 2026! Possible blocking IO'],
      [50, 'logger-probe', 'node-cron', 'boom'],
    ],
  );
  assert.is(parsed[1].err.message, 'boom');
});

test.run();
