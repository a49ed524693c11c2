// A caller's cooldown stream is named after the caller (commands/missed-calls/events.ts, callerStream),
// and a stream id is never sealed: it is in the log, its exports and its hash chain as it is. So the
// name holds a keyed hash of the number, never the number: HMAC-SHA-256 of the E.164 with a key kept
// in the KeyStore (outside the log, beside the customers' keys). Without the key nobody can test
// guesses against it (phone numbers are few enough to try them all against a plain hash).
//
// The key lives for one period as long as the cooldown (6 h, UTC-aligned on the service clock; subject
// `missed-call-callers:<restaurant>:<period>`) and is destroyed two periods later (the
// `missed-call-caller-keys` job): a cooldown only ever needs the current and the previous period's
// stream, and once the key is gone the stream id is opaque for good — an erased customer's number can
// no longer be tested against the ids it left in the log. A call made in the last IN_FLIGHT_MS of a
// period also claims the next period's stream, so a call from the same number just after the turn,
// which takes its slot there, meets it (no message twice across the turn).
//
// The first privacy release had one key per restaurant, never destroyed (`missed-call-callers:
// <restaurant>`, ids without a period): its streams are still read while that key lives, and the job
// destroys it once its slots' cooldown is over (docs/AUDIT.md, "Caller ids").
import { createHmac } from 'node:crypto';
import { IN_FLIGHT_MS } from '../../commands/missed-calls/decide';
import { COOLDOWN_MS } from '../../commands/missed-calls/events';
import type { KeyStore } from '../ports/key-store';

/** How long one caller key names callers: the cooldown's length. */
export const CALLER_PERIOD_MS = COOLDOWN_MS;

/** The period `at` falls in: whole periods since the epoch. */
export const callerPeriod = (at: Date): number => Math.floor(at.getTime() / CALLER_PERIOD_MS);

export const callerKeySubject = (restaurantId: string, period: number) =>
  `missed-call-callers:${restaurantId}:${period}`;

/** The first release's key: one per restaurant, no period. */
export const legacyCallerKeySubject = (restaurantId: string) => `missed-call-callers:${restaurantId}`;

/** 128 bits of the HMAC, base64url: 22 characters. */
export function callerHash(key: Buffer, e164: string): string {
  return createHmac('sha256', key).update(e164).digest().subarray(0, 16).toString('base64url');
}

/** A caller's id in a period: `p<period>-<hash>` (a legacy id is the hash alone). */
export const periodCallerId = (period: number, hash: string) => `p${period}-${hash}`;

/** The ids a call's cooldown decision reads and writes (see the top of this file). */
export interface CallerSlots {
  /** Where the call takes the caller's slot: the current period's id (its key made on first use). */
  take: string;
  /** Where a slot still in its cooldown may be held: the previous period's id and the legacy one, when their key lives. */
  earlier: string[];
  /** In the last IN_FLIGHT_MS of a period: the next period's id, which the call claims too. */
  next: string | null;
}

/** Caller ids over a key store: what the missed-call handler is given. */
export interface CallerIds {
  slots(restaurantId: string, e164: string, now: Date): Promise<CallerSlots>;
  /** Every id whose stream may hold a slot a call took lately (to free it), of the keys that live. */
  held(restaurantId: string, e164: string, now: Date): Promise<string[]>;
}

interface CachedKey {
  period: number;
  key: Promise<Buffer>;
}
const cached = new WeakMap<KeyStore, Map<string, CachedKey>>();

/** A period's key, made on first use; kept in memory only while the period can still be read. */
function periodKey(keys: KeyStore, restaurantId: string, period: number): Promise<Buffer> {
  let bySubject = cached.get(keys);
  if (bySubject === undefined) {
    bySubject = new Map();
    cached.set(keys, bySubject);
  }
  for (const [subject, c] of bySubject) if (c.period < period - 1) bySubject.delete(subject);
  const subject = callerKeySubject(restaurantId, period);
  let entry = bySubject.get(subject);
  if (entry === undefined) {
    const key = keys.obtain(subject);
    const map = bySubject;
    key.catch(() => map.delete(subject));
    entry = { period, key };
    bySubject.set(subject, entry);
  }
  return entry.key;
}

/** Drops keys from this process's memory (the job calls it for the keys it destroyed). */
export function forgetCallerKeys(keys: KeyStore, subjects: Iterable<string>): void {
  const bySubject = cached.get(keys);
  if (bySubject) for (const s of subjects) bySubject.delete(s);
}

/** The ids of the caller under each subject whose key lives (looked up, never made). */
async function idsUnderLiveKeys(
  keys: KeyStore,
  e164: string,
  subjects: { subject: string; period: number | null }[],
): Promise<string[]> {
  const found = await keys.findMany(subjects.map((s) => s.subject));
  const ids: string[] = [];
  for (const { subject, period } of subjects) {
    const k = found.get(subject);
    if (k?.state !== 'active') continue;
    const hash = callerHash(k.key, e164);
    ids.push(period === null ? hash : periodCallerId(period, hash));
  }
  return ids;
}

export function callerIdsFrom(keys: KeyStore): CallerIds {
  return {
    async slots(restaurantId, e164, now) {
      const p = callerPeriod(now);
      const take = periodCallerId(p, callerHash(await periodKey(keys, restaurantId, p), e164));
      const earlier = await idsUnderLiveKeys(keys, e164, [
        { subject: callerKeySubject(restaurantId, p - 1), period: p - 1 },
        { subject: legacyCallerKeySubject(restaurantId), period: null },
      ]);
      const nearTurn = (p + 1) * CALLER_PERIOD_MS - now.getTime() <= IN_FLIGHT_MS;
      const next = nearTurn
        ? periodCallerId(p + 1, callerHash(await periodKey(keys, restaurantId, p + 1), e164))
        : null;
      return { take, earlier, next };
    },
    held(restaurantId, e164, now) {
      const p = callerPeriod(now);
      return idsUnderLiveKeys(keys, e164, [
        ...[p - 1, p, p + 1].map((q) => ({ subject: callerKeySubject(restaurantId, q), period: q })),
        { subject: legacyCallerKeySubject(restaurantId), period: null },
      ]);
    },
  };
}

/** How far back a first sweep looks for keys left alive (a service stopped that long keeps older ones). */
export const SWEEP_LOOKBACK_PERIODS = 4 * 30;

export interface CallerKeySweep {
  /** Keys destroyed by this sweep. */
  destroyed: number;
  /** The last period swept: the next sweep starts after it. */
  through: number;
}

/**
 * Destroys the caller keys of periods `from` through two before `now`'s (their cooldowns are over and
 * no call reads them any more), and the restaurants' legacy keys when `legacy` is set. Idempotent.
 */
export async function destroyExpiredCallerKeys(
  keys: KeyStore,
  restaurantIds: readonly string[],
  now: Date,
  opts: { from: number; legacy: boolean },
): Promise<CallerKeySweep> {
  const through = callerPeriod(now) - 2;
  const subjects: string[] = [];
  for (const r of restaurantIds) {
    for (let q = opts.from; q <= through; q++) subjects.push(callerKeySubject(r, q));
    if (opts.legacy) subjects.push(legacyCallerKeySubject(r));
  }
  let destroyed = 0;
  const at = now.toISOString();
  for (let i = 0; i < subjects.length; i += 500) {
    const chunk = subjects.slice(i, i + 500);
    const found = await keys.findMany(chunk);
    const live = chunk.filter((s) => found.get(s)?.state === 'active');
    for (const s of live) if (await keys.destroy(s, at)) destroyed++;
    forgetCallerKeys(keys, live);
  }
  return { destroyed, through };
}
