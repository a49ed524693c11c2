// The scheduler role (DESIGN.md §1): node-cron triggers jobs that issue ordinary commands. Modules
// register their jobs (src/modules.ts); a job is a plain async function of the runtime, so tests call
// it directly with a fixed clock instead of waiting for cron. Time inside a job is rt.clock, never
// cron's wall clock: cron only decides when to look.
import cron, { type Logger as CronLogger, type ScheduledTask } from 'node-cron';
import type { Logger } from './logger';
import type { Runtime } from './runtime';

export interface ScheduledJob {
  name: string;
  /** node-cron expression (seconds optional). */
  schedule: string;
  /** Reads and checks the job's settings; throws a ConfigError naming the variable. */
  checkConfig?(env: Env): void;
  /** Returns a one-line summary worth logging, or null when it found nothing to do. */
  run(rt: Runtime, env: Env): Promise<string | null>;
}

export type Env = Readonly<Record<string, string | undefined>>;

const jobs: ScheduledJob[] = [];
export function registerScheduledJob(job: ScheduledJob): void {
  if (!cron.validate(job.schedule))
    throw new Error(`job ${job.name}: invalid cron expression ${job.schedule}`);
  if (jobs.some((j) => j.name === job.name)) return;
  jobs.push(job);
}
export const scheduledJobs = (): readonly ScheduledJob[] => jobs;

export interface RunningScheduler {
  stop(): Promise<void>;
}

/** Checks every registered job's settings (NO_SHOW_GRACE_MINUTES…): throws on a bad one. */
export function checkScheduledJobs(env: Env = process.env): void {
  for (const job of jobs) job.checkConfig?.(env);
}

/**
 * node-cron's own messages (a run skipped because the previous one still runs, a run missed while the
 * event loop was held) through the service's logger, as JSON lines naming the job: node-cron writes
 * them with console, as coloured text (ANSI escapes) among the JSON lines.
 */
export function cronLogger(logger: Logger, job: string): CronLogger {
  const text = (m: string | Error) => (m instanceof Error ? m.message : m);
  const err = (e: Error | undefined) => (e ? { err: { message: e.message, stack: e.stack } } : {});
  return {
    info: (m) => logger.info({ job, scheduler: 'node-cron' }, m),
    warn: (m) => logger.warn({ job, scheduler: 'node-cron' }, m),
    error: (m, e) =>
      logger.error({ job, scheduler: 'node-cron', ...err(m instanceof Error ? m : e) }, text(m)),
    debug: (m, e) =>
      logger.debug({ job, scheduler: 'node-cron', ...err(m instanceof Error ? m : e) }, text(m)),
  };
}

/** Starts every registered job. A run never overlaps the previous run of the same job. */
export function startScheduler(rt: Runtime, env: Env = process.env): RunningScheduler {
  // A bad setting stops the start, like any other configuration error, not every run later.
  checkScheduledJobs(env);
  const running = new Set<Promise<unknown>>();
  const tasks: ScheduledTask[] = jobs.map((job) =>
    cron.schedule(
      job.schedule,
      async () => {
        const run = job.run(rt, env).then(
          (summary) => {
            if (summary) rt.logger.info({ job: job.name }, summary);
          },
          (err: Error) =>
            rt.logger.error({ job: job.name, err: { message: err.message, stack: err.stack } }, 'job failed'),
        );
        running.add(run);
        await run;
        running.delete(run);
      },
      { name: job.name, noOverlap: true, logger: cronLogger(rt.logger, job.name) },
    ),
  );
  return {
    async stop() {
      for (const t of tasks) await t.destroy();
      // Let a job finish its current command before the stores close under it.
      await Promise.all(running);
    },
  };
}
