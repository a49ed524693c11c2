// `read-models rebuild`. Embedded read models live in the server's memory and are rebuilt from the
// log at every start, so there is nothing on disk to rebuild: the command replays the log into fresh
// read models as a consistency check. Scaled out it drops the MongoDB read models, which live API
// processes and the projector are using, so it asks for --force. The same database also holds state
// that is no read model and is not in the log (dashboard sessions, the shared rate-limit budgets):
// the rebuild keeps those collections (NOT_READ_MODELS).
import { SingleBar } from 'cli-progress';
import { EmbeddedDocumentStore } from '../adapters/document-store/embedded';
import type { Config } from '../config';
import { RATE_LIMITS_COLLECTION } from '../http/rate-limit';
import type { DocumentStore } from '../ports/document-store';
import { ProjectionRunner } from '../projection/runner';
import type { Runtime } from '../runtime';
import { SESSIONS } from '../web/sessions';
import { boolFlag, type CliContext, CliUsageError, registerCliCommand, rejectUnknownFlags } from './registry';

export type RebuildPlan =
  | { action: 'check-embedded' }
  | { action: 'drop-and-rebuild' }
  | { action: 'refuse'; message: string };

/**
 * Collections of the read-models database that no projection writes and the log cannot rebuild: a
 * rebuild keeps them (managers stay signed in, rate-limit budgets are not reset).
 */
export const NOT_READ_MODELS: readonly string[] = [SESSIONS, RATE_LIMITS_COLLECTION];

/** Drops the read models and their checkpoints, keeping NOT_READ_MODELS. */
export const dropReadModels = (docs: DocumentStore) => docs.dropAll(NOT_READ_MODELS);

export function planRebuild(config: Pick<Config, 'store' | 'mongodbDb'>, force: boolean): RebuildPlan {
  if (config.store === 'embedded') return { action: 'check-embedded' };
  if (force) return { action: 'drop-and-rebuild' };
  return {
    action: 'refuse',
    message:
      `read-models rebuild drops every read model in the MongoDB database "${config.mongodbDb}" (not the dashboard sessions nor the rate-limit budgets, which it keeps) and rebuilds them from the event log; ` +
      'API processes and the projector read and write them meanwhile (partners would see missing data, the projector would write into the rebuild). ' +
      'Stop the projector and every API process first (docker compose stop api projector), then run it again with --force.',
  };
}

async function replay(ctx: CliContext, docs: DocumentStore) {
  const { rt } = ctx;
  const head = await rt.events.headPosition();
  const bar =
    boolFlag(ctx, 'no-progress') === true
      ? null
      : new SingleBar({ format: 'replay [{bar}] {percentage}% | {value}/{total} positions | {eta}s left' });
  bar?.start(Number(head ?? 0n), 0);
  const runner = new ProjectionRunner(rt.events, docs, rt.projections.projections, {
    batchSize: 1000,
    onProgress: (_n, pos) => bar?.update(Number(pos)),
  });
  const started = Date.now();
  try {
    await runner.start();
    const events = await runner.catchUp();
    return { events, readModels: runner.projections.length, seconds: (Date.now() - started) / 1000 };
  } finally {
    bar?.stop();
  }
}

async function checkEmbedded(ctx: CliContext): Promise<void> {
  const docs = new EmbeddedDocumentStore();
  try {
    const r = await replay(ctx, docs).catch((err: unknown) => {
      throw new Error(
        `consistency check failed: replaying the log into fresh read models threw: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    ctx.out(
      'embedded store: the read models live in the server process and are rebuilt from the event log at each start, so there is nothing on disk to rebuild and nothing changed.',
    );
    ctx.out(
      `consistency check passed: replayed ${r.events} events from the log in ${ctx.rt.config.dataDir} into ${r.readModels} fresh read models in ${r.seconds.toFixed(1)} s`,
    );
  } finally {
    await docs.close();
  }
}

async function dropAndRebuild(ctx: CliContext, rt: Runtime): Promise<void> {
  await dropReadModels(rt.docs);
  // The runner writes versioned collections under their own names: the raw store, not the aliased one.
  const r = await replay(ctx, rt.projections.docs);
  await rt.versions.writeAll();
  ctx.out(`rebuilt ${r.readModels} read models from ${r.events} events in ${r.seconds.toFixed(1)} s`);
}

export function registerReadModelCommands(): void {
  registerCliCommand({
    name: 'read-models rebuild',
    summary:
      'Scaled out: drop the read models (not dashboard sessions nor rate-limit budgets) and rebuild them from the event log (stop the projector and API first). Embedded: replay the log as a consistency check',
    usage: '[--force] [--no-progress]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['force', 'no-progress']);
      const plan = planRebuild(ctx.rt.config, boolFlag(ctx, 'force') === true);
      if (plan.action === 'refuse') throw new CliUsageError(plan.message);
      if (plan.action === 'check-embedded') await checkEmbedded(ctx);
      else await dropAndRebuild(ctx, ctx.rt);
    },
  });
}
