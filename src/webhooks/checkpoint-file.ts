// DATA_DIR/webhooks.checkpoint: the embedded publisher's position in the log (written by
// writeCheckpoint in ./runner.ts). Read by the publisher when it starts and by the start's check for a
// missing log (src/damaged-files.ts), both through parseCheckpoint: one rule for what the file holds.
import { positionFromString } from '../ports/event-store';

export const CHECKPOINT_FILE = 'webhooks.checkpoint';

/** What a checkpoint file holds: a log position, as positionToString writes it (20 digits); shorter was cut. */
const POSITION = /^\d{20}$/;

/**
 * The position a checkpoint file's text holds (surrounding whitespace ignored), or undefined when it
 * holds none: empty, cut short by a crash, garbage.
 */
export function parseCheckpoint(text: string): bigint | undefined {
  const raw = text.trim();
  return POSITION.test(raw) ? positionFromString(raw) : undefined;
}
