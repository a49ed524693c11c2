// The scheduler role (DESIGN.md §1): node-cron triggers jobs that issue ordinary commands. Modules
// register their jobs (src/modules.ts); a job is a plain async function of the runtime, so tests call
// it directly with a fixed clock instead of waiting for cron. Time inside a job is rt.clock, never
// cron's wall clock: cron only decides when to look.
import cron, { type ScheduledTask } from 'node-cron';
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
      { name: job.name, noOverlap: true },
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
