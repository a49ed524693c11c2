// The projector role (scaled out): follows the log live until the runtime closes. A transient failure
// (MongoDB or EventStoreDB unreachable, no writable primary) restarts the follow with backoff, as
// long as it lasts. A write MongoDB refuses whatever the retry (a document too large, one failing the
// collection's validation: isPermanentRefusal) stops the projector instead of retrying it forever:
// one error names the projection, the event and its position, /healthz answers 503 naming the
// projection and the event's type (public: no position), and
// they are recorded in MongoDB for `projections status` (PROJECTOR_STATE). The read models stay at
// the event before; a restart of the projector (once the projection or the data is fixed) retries.
import type { Clock } from '../core/clock';
import type { Logger } from '../logger';
import { type DocumentStore, isPermanentRefusal } from '../ports/document-store';
import type { ProjectionRunner, ProjectorHalt } from './runner';

/** The collection (one document, `_id: 'projector'`) where a stopped projector records why. */
export const PROJECTOR_STATE = 'projector_state';
const STATE_ID = 'projector';

export type ProjectorStateDoc = ProjectorHalt & { _id: string; state: 'stopped' };

export interface FollowOptions {
  logger: Logger;
  clock: Clock;
  /** Waits between restarts (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the last failure of the runner says about where it happened (all null when unknown). */
function whereItFailed(runner: ProjectionRunner, err: unknown) {
  const f = runner.lastFailure;
  const known = f !== null && f.error === err;
  return {
    projection: known ? f.projection : null,
    event_type: known ? f.event.type : null,
    event_id: known ? f.event.id : null,
    position: known ? f.event.position.toString() : null,
  };
}

/** The stopped projector's record, or null (it follows, or never stopped). */
export async function readProjectorState(docs: DocumentStore): Promise<ProjectorStateDoc | null> {
  return docs.collection<ProjectorStateDoc>(PROJECTOR_STATE).findOne({ _id: STATE_ID });
}

/** Runs the projector until the runner stops, or stops it on a permanent refusal (see the top). */
export async function followForever(runner: ProjectionRunner, options: FollowOptions): Promise<void> {
  const { logger, clock } = options;
  const sleep = options.sleep ?? sleepFor;
  const state = runner.docs.collection<ProjectorStateDoc>(PROJECTOR_STATE);
  // A projector that starts (again) clears the record of a stop: the restart is the retry.
  await state.deleteOne({ _id: STATE_ID }).catch(() => undefined);
  let delay = 500;
  for (;;) {
    try {
      await runner.follow();
      return;
    } catch (err) {
      if (runner.isStopped) return;
      const where = whereItFailed(runner, err);
      const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      if (isPermanentRefusal(err)) {
        const halt: ProjectorHalt = { ...where, error, at: clock.now().toISOString() };
        runner.halted = halt;
        logger.error(
          { ...where, err: { name: (err as Error).name, message: (err as Error).message } },
          'projector stopped: the document store refuses this projection’s write of the event and would refuse every retry; the read models stay before it. Fix the projection (or the document it builds), then restart the projector',
        );
        await state
          .replaceOne({ _id: STATE_ID }, { _id: STATE_ID, state: 'stopped', ...halt }, { upsert: true })
          .catch((recordErr: unknown) =>
            logger.error(
              { err: { message: (recordErr as Error).message } },
              'projector stop could not be recorded for projections status',
            ),
          );
        return;
      }
      logger.error(
        { ...where, retry_in_ms: delay, err: { name: (err as Error).name, message: (err as Error).message } },
        'projector failed; restarting',
      );
      await sleep(delay);
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
