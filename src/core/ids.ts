import { createHash, hash, randomUUID, timingSafeEqual } from 'node:crypto';
import { randomView } from './random-pool';

/** Resource ids: a readable prefix and 16 random bytes in base32-like lowercase (sortable enough, unguessable). */
export function newId(prefix: string): string {
  return `${prefix}_${randomView(12).toString('base64url').replace(/[-_]/g, 'x').toLowerCase()}`;
}

export const newEventId = (): string => randomUUID();

/** A deterministic UUID (v5-like layout) from a name, so a retried append carries the same event id. */
export function deterministicUuid(name: string): string {
  const h = createHash('sha256').update(name).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** SHA-256 for high-entropy secrets (API keys, codes): a slow hash buys nothing against 256 random bits. */
export function sha256(value: string): string {
  // One-shot: no Hash object per call (it is on every authenticated request).
  return hash('sha256', value, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
