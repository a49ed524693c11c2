// The error a catch-up ends with when a projection could not apply an event. The projection's own
// message ("Invalid time value", "Cannot read properties of undefined") names neither the event nor
// its stream: an event edited into JSON of another shape (valid JSON, so the reader takes it) stopped
// the embedded start of the server and of the CLI, `audit verify` included, with that bare message.
import type { ProjectionRunner } from './runner';

/** A projection could not apply an event (its message names the event): the log edited, or a defect. */
export class ReplayFailure extends Error {}

/** `err` named by the event the runner failed on (same error when the failure was not an apply's). */
export function namedReplayFailure(runner: ProjectionRunner, err: unknown): unknown {
  const f = runner.lastFailure;
  if (f === null || f.error !== err) return err;
  const e = f.event;
  const why = err instanceof Error ? err.message : String(err);
  return new ReplayFailure(
    `projection ${f.projection} could not apply the event at position ${e.position} (${e.stream} revision ${e.revision}, ${e.type}): ${why}. The event is not what its type holds: the log was edited (npm run cli -- audit verify --no-read-models checks every stream's hash chain), or the projection has a defect`,
    { cause: err },
  );
}
