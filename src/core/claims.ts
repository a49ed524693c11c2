// Unique values (slugs, API key hashes, external ids, OAuth code use) enforced on the write side by a
// claim stream named after the value: the first append with "no stream" wins.
import { NO_STREAM, WrongExpectedRevisionError } from '../ports/event-store';
import type { CommandMeta } from './command-meta';
import { conflict } from './errors';
import type { WriteDeps } from './write-deps';

export interface ClaimResult {
  /** True when this call took the claim; false when `owner` already held it (a retried call). */
  taken: boolean;
  position: bigint | null;
}

export async function claim(
  deps: WriteDeps,
  stream: string,
  owner: string,
  meta: CommandMeta,
  what = 'value',
): Promise<ClaimResult> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const events = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
    const last = events[0];
    if (last && last.type === 'Claimed') {
      if ((last.data as { owner: string }).owner === owner) return { taken: false, position: null };
      throw conflict(`this ${what} is already in use`, { claimed: what });
    }
    try {
      const r = await deps.events.append(
        stream,
        [{ type: 'Claimed', data: { owner, at: deps.clock.now().toISOString() }, metadata: meta }],
        last ? last.revision : NO_STREAM,
      );
      return { taken: true, position: r.position };
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
  }
  throw conflict(`this ${what} is being claimed concurrently; retry`);
}

/**
 * Frees a claim held by `owner` (no-op otherwise), so the value can be claimed again. Returns the
 * position of the `Released` event, or null when nothing was written.
 */
export async function release(
  deps: WriteDeps,
  stream: string,
  owner: string,
  meta: CommandMeta,
): Promise<bigint | null> {
  const events = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
  const last = events[0];
  if (last?.type !== 'Claimed' || (last.data as { owner: string }).owner !== owner) return null;
  try {
    const r = await deps.events.append(
      stream,
      [{ type: 'Released', data: { owner, at: deps.clock.now().toISOString() }, metadata: meta }],
      last.revision,
    );
    return r.position;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    return null;
  }
}
