// Operator commands of the customer CSV import (src/customer-import/engine.ts): import or dry-run a
// file, resume a job whose process stopped, show a job, write its summary.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { ON_MATCH, type OnMatch } from '../../commands/customer-import/events';
import { loadImportJob } from '../../commands/customer-import/handler';
import { STALE_AFTER_MS, silentTooLong, UNSTARTED_AFTER_MS } from '../../commands/customer-import/slot';
import type { ImportJobState } from '../../commands/customer-import/state';
import { operatorMeta } from '../core/command-meta';
import { ApiError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import {
  type ImportProgress,
  importCustomers,
  planImport,
  prepareImport,
  resumeImport,
  threadChoice,
} from '../customer-import/engine';
import { jobSummaryCsv, summaryCsv } from '../customer-import/summary';
import {
  boolFlag,
  type CliContext,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
  requireFlag,
} from './registry';

function onMatchFlag(ctx: CliContext): OnMatch {
  const v = optionalFlag(ctx, 'on-match') ?? 'return_existing';
  if (!(ON_MATCH as readonly string[]).includes(v))
    throw new CliUsageError(`--on-match takes ${ON_MATCH.join(', ')}`);
  return v as OnMatch;
}

function batchFlag(ctx: CliContext): number | undefined {
  const v = optionalFlag(ctx, 'batch-size');
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 5000)
    throw new CliUsageError('--batch-size takes an integer from 1 to 5000');
  return n;
}

const summaryPath = (file: string, what: string) =>
  join(dirname(file), `${basename(file, extname(file))}.${what}.summary.csv`);

/**
 * Where a summary goes: the default beside the input (`<file>.<job or dry-run>.summary.csv`, the
 * tool's own name, rewritten on a new dry run or resume), or the path given, which must not exist
 * unless --force is given (as `audit export --out` refuses to overwrite) and is never the input file,
 * --force or not. Checked before anything is imported, so a refusal leaves nothing half done.
 */
async function summaryTarget(
  ctx: CliContext,
  flag: 'summary' | 'out',
  given: string | undefined,
  fallback: string,
  input?: string,
): Promise<{ path: string; flags: 'w' | 'wx' }> {
  if (given === undefined) return { path: fallback, flags: 'w' };
  const found = await stat(given).catch(() => null);
  if (input !== undefined) {
    const source = await stat(input).catch(() => null);
    const same =
      resolve(given) === resolve(input) ||
      (found && source && found.dev === source.dev && found.ino === source.ino);
    if (same) throw new CliUsageError(`--${flag} ${given} is the input file: choose another file`);
  }
  const force = boolFlag(ctx, 'force') === true;
  if (found && !force)
    throw new CliUsageError(
      `--${flag} ${given} already exists: choose a new file, or add --force to overwrite it`,
    );
  return { path: given, flags: force ? 'w' : 'wx' };
}

const countsLine = (c: ImportJobState['counts']) =>
  `created ${c.created}, updated ${c.updated}, matched ${c.matched}, skipped ${c.skipped}`;

/** A progress bar on a terminal; nothing otherwise (the final lines say what happened). */
function progressBar(): { update(p: ImportProgress): void; stop(): void } {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({
    format: 'importing [{bar}] {percentage}% | {value}/{total} rows | {rate} rows/s',
    hideCursor: true,
  });
  const started = Date.now();
  let on = false;
  return {
    update(p) {
      const rate = Math.round(p.processed / Math.max(0.001, (Date.now() - started) / 1000));
      if (!on) {
        bar.start(p.rowCount, p.processed, { rate });
        on = true;
      } else bar.update(p.processed, { rate });
    },
    stop: () => on && bar.stop(),
  };
}

/** A word the shell reads back as itself: as it is when plain, else in single quotes. */
export const shellWord = (w: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", `'\\''`)}'`;

/**
 * What an operator refused because `jobId` holds the restaurant's import slot can do: its last activity
 * and rows done, and --resume only once it has gone silent (its process gone). A job still active (a
 * CLI run elsewhere, a dashboard import in the server) is waited for; resuming it would make two
 * processes write one job, which the resume refuses (decideResumeImport). One not started yet (its
 * slot taken, no event) has nothing to resume.
 */
export function runningImportHint(
  jobId: string,
  restaurantId: string,
  held: ImportJobState | null,
  nowMs: number,
): string {
  const status = `npm run cli -- customers import-status --job ${jobId}`;
  if (!held || held.status === 'none')
    return `the running import is ${jobId}: its job has not started yet (nothing to show or resume); wait until it starts or its slot frees itself (${UNSTARTED_AFTER_MS / 60_000} minutes at the most), then import again`;
  const last = held.lastEventAt ?? held.startedAt;
  const facts = `${held.fileName ?? 'a file'}, ${held.processed} of ${held.rowCount} rows done, last activity ${last ?? 'unknown'}`;
  const resume = `npm run cli -- customers import --resume ${jobId} --restaurant ${shellWord(restaurantId)} --file <its file>`;
  if (held.status === 'running' && last && silentTooLong(last, nowMs))
    return `the running import is ${jobId} (${facts}): silent for ${STALE_AFTER_MS / 60_000} minutes, its process is gone; finish it with: ${resume}`;
  const from = last ? new Date(Date.parse(last) + STALE_AFTER_MS).toISOString() : null;
  return `the running import is ${jobId} (${facts}; ${status}): it is still active (a CLI run elsewhere, or a dashboard import in the server): wait until it ends${from ? `; should its process be gone, it can be resumed from ${from}, once silent ${STALE_AFTER_MS / 60_000} minutes` : ''}`;
}

function describe(s: ImportJobState): string[] {
  const written = s.written ?? [];
  return [
    `import ${s.jobId} (${s.status}) of ${s.fileName} into ${s.restaurantId}, on_match ${s.onMatch}, by ${s.actor}`,
    `rows ${s.processed}/${s.rowCount}: ${countsLine(s.counts)}`,
    ...(s.written !== null
      ? [
          `after row ${s.processed}: ${written.length} rows written all the same, ${s.rowCount - s.processed - written.length} not imported (the summary lists each)`,
        ]
      : []),
    ...(s.failure ? [`failure: ${s.failure}`] : []),
  ];
}

export function registerCustomerImportCommands(): void {
  registerCliCommand({
    name: 'customers import',
    summary: 'Import customers from a CSV file (publishes no webhook); --dry-run previews every row',
    usage:
      '--restaurant R --file F.csv [--on-match return_existing|update|create_new] [--dry-run] [--summary PATH [--force]] [--batch-size N] | --resume JOB --restaurant R --file F.csv',
    switches: ['dry-run', 'force'],
    async run(ctx) {
      rejectUnknownFlags(ctx, [
        'restaurant',
        'file',
        'on-match',
        'dry-run',
        'summary',
        'batch-size',
        'resume',
        'force',
      ]);
      const restaurantId = requireFlag(ctx, 'restaurant');
      const file = requireFlag(ctx, 'file');
      const dryRun = boolFlag(ctx, 'dry-run') === true;
      const resume = optionalFlag(ctx, 'resume');
      if (resume && (dryRun || ctx.flags['on-match'] !== undefined))
        throw new CliUsageError('--resume goes on with the job as it started: no --dry-run or --on-match');
      const onMatch = onMatchFlag(ctx);
      const batchSize = batchFlag(ctx);
      const bytes = await readFile(file).catch((err: NodeJS.ErrnoException) => {
        throw new CliUsageError(`cannot read ${file}: ${err.code ?? err.message}`);
      });
      const jobId = resume ?? newId('imp');
      const target = await summaryTarget(
        ctx,
        'summary',
        optionalFlag(ctx, 'summary'),
        summaryPath(file, dryRun ? 'dry-run' : jobId),
        file,
      );
      const prepared = await prepareImport(ctx.rt, restaurantId, bytes);
      const rows = prepared.table.rows.length;
      if (dryRun) {
        const plan = await planImport(ctx.rt, prepared, onMatch);
        const out = target.path;
        await writeFile(out, summaryCsv(plan.rows), { flag: target.flags });
        ctx.out(`dry run of ${rows} rows (nothing written): would be ${countsLine(plan.counts)}`);
        ctx.out(`summary: ${out}`);
        return;
      }
      const bar = progressBar();
      const meta = operatorMeta('cli');
      const started = performance.now();
      const resumeCommand = `npm run cli -- customers import --resume ${jobId} --restaurant ${shellWord(restaurantId)} --file ${shellWord(file)}`;
      // Said once the job exists (its first progress report), before any row: a process killed or a
      // machine lost mid-import prints nothing more, and --resume needs this id.
      let announced = false;
      const onProgress = (p: ImportProgress) => {
        if (!announced) {
          announced = true;
          ctx.out(
            `import ${jobId} ${resume ? 'resumed after row' : 'started:'} ${resume ? `${p.processed} of ${p.rowCount}` : `${p.rowCount} rows`}; should it be interrupted, finish it with: ${resumeCommand}`,
          );
        }
        bar.update(p);
      };
      let state: ImportJobState;
      try {
        state = resume
          ? await resumeImport(ctx.rt, prepared, resume, {
              meta,
              ...threadChoice(ctx.rt.config),
              batchSize,
              onProgress,
            })
          : await importCustomers(ctx.rt, prepared, {
              onMatch,
              ...threadChoice(ctx.rt.config),
              fileName: basename(file),
              meta,
              batchSize,
              jobId,
              onProgress,
            });
      } catch (err) {
        bar.stop();
        // Another import holds the restaurant: name it, so an operator whose own run of it died (a
        // SIGKILL, a lost terminal) can finish it now rather than wait for its slot to go stale.
        if (err instanceof ApiError && err.details?.reason === 'IMPORT_RUNNING') {
          const running = String(err.details.job_id);
          const { state: held } = await loadImportJob(ctx.rt, running).catch(() => ({ state: null }));
          ctx.out(runningImportHint(running, restaurantId, held, ctx.rt.clock.now().getTime()));
          throw err;
        }
        // A job that stopped part way: its summary says which rows were written and which were not
        // (not_imported), and how to finish it; then the error, as any command's.
        const { state: failed } = await loadImportJob(ctx.rt, jobId).catch(() => ({ state: null }));
        if (failed && failed.status !== 'none' && failed.status !== 'finished') {
          const out = target.path;
          await writeFile(out, await jobSummaryCsv(ctx.rt, jobId), { flag: target.flags }).then(
            () => ctx.out(`import ${jobId} stopped after row ${failed.processed}: summary: ${out}`),
            () => undefined,
          );
          ctx.out(`finish it with: ${resumeCommand}`);
        }
        throw err;
      } finally {
        bar.stop();
      }
      const seconds = (performance.now() - started) / 1000;
      const out = target.path;
      await writeFile(out, await jobSummaryCsv(ctx.rt, state.jobId as string), { flag: target.flags });
      ctx.out(
        `import ${state.jobId} ${state.status}: ${rows} rows in ${seconds.toFixed(1)} s: ${countsLine(state.counts)}`,
      );
      ctx.out(`summary: ${out}`);
    },
  });
  registerCliCommand({
    name: 'customers import-status',
    summary: 'Show an import job: file, actor, progress, counts',
    usage: '--job imp_x',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['job']);
      const id = requireFlag(ctx, 'job');
      const { state } = await loadImportJob(ctx.rt, id);
      if (state.status === 'none') throw notFound(`import ${id}`);
      for (const l of describe(state)) ctx.out(l);
    },
  });
  registerCliCommand({
    name: 'customers import-summary',
    summary: "Write an import job's summary CSV (row, outcome, customer_id, matched_on, errors)",
    usage: '--job imp_x --out PATH [--force]',
    switches: ['force'],
    async run(ctx) {
      rejectUnknownFlags(ctx, ['job', 'out', 'force']);
      const id = requireFlag(ctx, 'job');
      const given = requireFlag(ctx, 'out');
      const { state } = await loadImportJob(ctx.rt, id);
      if (state.status === 'none') throw notFound(`import ${id}`);
      const target = await summaryTarget(ctx, 'out', given, given);
      const out = target.path;
      await writeFile(out, await jobSummaryCsv(ctx.rt, id), { flag: target.flags });
      ctx.out(`summary: ${out}`);
    },
  });
}
