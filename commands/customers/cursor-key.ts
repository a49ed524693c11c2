// The key that signs GET /customers cursors, one per restaurant, kept in the event log: every API
// process of a scaled-out deployment reads the same key without sharing a disk or a setting, and a
// cursor signed for one restaurant never verifies for another. Created on first use; the first append
// wins and every process then reads that one.
import { randomBytes } from 'node:crypto';
import type { WriteDeps } from '../../src/core/write-deps';
import { type EventStore, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';

export const cursorKeyStream = (restaurantId: string) => `cursor-key-customers-${restaurantId}`;

const cache = new WeakMap<EventStore, Map<string, Buffer>>();

export async function customerCursorKey(deps: WriteDeps, restaurantId: string): Promise<Buffer> {
  let keys = cache.get(deps.events);
  if (!keys) {
    keys = new Map();
    cache.set(deps.events, keys);
  }
  const known = keys.get(restaurantId);
  if (known) return known;
  const stream = cursorKeyStream(restaurantId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const [first] = await deps.events.readStream(stream, { limit: 1 });
    if (first) {
      const key = Buffer.from((first.data as { key: string }).key, 'base64url');
      keys.set(restaurantId, key);
      return key;
    }
    try {
      const data = {
        restaurant_id: restaurantId,
        key: randomBytes(32).toString('base64url'),
        at: deps.clock.now().toISOString(),
      };
      await deps.events.append(
        stream,
        [
          {
            type: 'CustomerCursorKeyGenerated',
            data,
            metadata: { actor: 'system:customers', restaurant_id: restaurantId },
          },
        ],
        NO_STREAM,
      );
    } catch (err) {
      // Another process created it first: read theirs.
      if (!(err instanceof WrongExpectedRevisionError)) throw err;
    }
  }
  throw new Error(`could not read or create the cursor key of ${restaurantId}`);
}
