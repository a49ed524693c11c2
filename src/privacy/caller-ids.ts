// A caller's cooldown stream is named after the caller (commands/missed-calls/events.ts, callerStream),
// and a stream id is never sealed: it is in the log, its exports and its hash chain as it is. So the
// name holds a keyed hash of the number, never the number: HMAC-SHA-256 of the E.164 with a key per
// restaurant kept in the KeyStore (outside the log, beside the customers' keys; subject
// `missed-call-callers:<restaurant>`). Without the key nobody can test guesses against it (phone numbers
// are few enough to try them all against a plain hash). The key is never destroyed: erasing a customer
// leaves an opaque id behind, which nothing in the log links to a number any more.
import { createHmac } from 'node:crypto';
import type { KeyStore } from '../ports/key-store';

export const callerKeySubject = (restaurantId: string) => `missed-call-callers:${restaurantId}`;

/** 128 bits of the HMAC, base64url: 22 characters. */
export function callerHash(key: Buffer, e164: string): string {
  return createHmac('sha256', key).update(e164).digest().subarray(0, 16).toString('base64url');
}

const cached = new WeakMap<KeyStore, Map<string, Promise<Buffer>>>();

/** The restaurant's caller key (created on first use, durable; remembered per key store). */
export function callerKey(keys: KeyStore, restaurantId: string): Promise<Buffer> {
  let byRestaurant = cached.get(keys);
  if (byRestaurant === undefined) {
    byRestaurant = new Map();
    cached.set(keys, byRestaurant);
  }
  let key = byRestaurant.get(restaurantId);
  if (key === undefined) {
    key = keys.obtain(callerKeySubject(restaurantId));
    const map = byRestaurant;
    key.catch(() => map.delete(restaurantId));
    byRestaurant.set(restaurantId, key);
  }
  return key;
}

/** What names a caller in stream ids: the keyed hash of their E.164 number. */
export async function callerId(keys: KeyStore, restaurantId: string, e164: string): Promise<string> {
  return callerHash(await callerKey(keys, restaurantId), e164);
}

/** `(restaurant, E.164) → caller id` over a key store: what the missed-call handler is given. */
export const callerIdsFrom =
  (keys: KeyStore) =>
  (restaurantId: string, e164: string): Promise<string> =>
    callerId(keys, restaurantId, e164);
