// Number keys: sealing a missed call's number that no customer owns (docs/AUDIT.md, right to erasure).
//
// A call to a restaurant without the missed-call feature matches and creates nobody; when no customer
// has the caller's number, no customer's key can seal it. Such an event (a missed-call event with a
// number and no `customer_id`) is sealed by the sealing layer with a key of its own: a key of the
// layer's pool (one per event, made ahead in durable key pages — no key write on the request path),
// named in the box (`v: 2`, `kid`) like a new customer's, the box's owner being the call
// (`customer_id: "call:<missed_call_id>"`, part of the associated data).
//
// Why one key per call, not per number or per number and period: erasure must reach the calls of a
// number whatever their age, and a key shared by a number would have to be found again from the
// number (then the log, or its key's subject, would hold something computed from the number — an
// oracle phone numbers are few enough to test every guess against); a key per call is found through
// the link below only, and destroying it touches that call and nothing else.
//
// The number → keys index lives in the KeyStore, never in the log: a link (KeyStore.link) from the
// label `missed-call-number:<restaurant>:<hash>` — the hash an HMAC-SHA-256 (128 bits) of the E.164
// number with the restaurant's number-index key (subject `missed-call-numbers:<restaurant>`) — to the
// member `<kid> <missed_call_id>`, written durably before the sealed event is appended (an event whose
// link was lost could never be erased by number). Erasing a customer (SealingEventStore.erase) reads
// every number their stream ever held, destroys the key of every call linked to each number at that
// restaurant, appends `MissedCallCallerErased` to each call (the read models blank the number, other
// processes drop the key, `audit history` says so), then deletes the label whole (no tombstone: no
// trace of the erased number is left beside the keys either). What stays: a pool key's tombstone
// (`key:<page>.<slot>`, random) and the call's id.
import { createHmac } from 'node:crypto';
import { CALLER_ERASED_EVENT } from '../../commands/missed-calls/events';
import type { KeyStore } from '../ports/key-store';

/** Missed-call events that hold a caller's number, and where. */
const NUMBER_FIELD: Record<string, string> = {
  MissedCallReported: 'caller_phone_number',
  MessageSlotTaken: 'caller',
  MessageRequested: 'to',
  OutboxMessageRecorded: 'to',
};

const NUMBER_TYPES: ReadonlySet<string> = new Set(Object.keys(NUMBER_FIELD));

/** What the sealing layer appends to a call whose number key an erasure destroyed. */
export const CALLER_ERASED = CALLER_ERASED_EVENT;

/** The box owner of a number-sealed event: its call (never a customer id: those have no colon). */
export const callOwner = (callId: string | null) => `call:${callId ?? '-'}`;

/** The restaurant's key for hashing numbers into link labels. */
export const numberIndexSubject = (restaurantId: string) => `missed-call-numbers:${restaurantId}`;

/** The link label of a number at a restaurant (hash: numberHash). */
export const numberLabel = (restaurantId: string, hash: string) =>
  `missed-call-number:${restaurantId}:${hash}`;

/** 128 bits of HMAC-SHA-256 of the E.164 number, base64url (22 characters). */
export const numberHash = (key: Buffer, e164: string): string =>
  createHmac('sha256', key).update(e164).digest().subarray(0, 16).toString('base64url');

export const linkMember = (kid: string, callId: string | null) => `${kid} ${callId ?? '-'}`;

export function parseLinkMember(member: string): { kid: string; callId: string | null } | null {
  const space = member.indexOf(' ');
  if (space <= 0) return null;
  const callId = member.slice(space + 1);
  return { kid: member.slice(0, space), callId: callId === '-' || callId === '' ? null : callId };
}

/**
 * The number, restaurant and call of an event that needs a number key: a missed-call event holding a
 * number, not sealed, naming no customer. Null for every other event.
 */
export function numberSealing(
  type: string,
  data: Record<string, unknown>,
): { number: string; restaurantId: string; callId: string | null } | null {
  const field = NUMBER_FIELD[type];
  if (field === undefined || 'sealed' in data || typeof data.customer_id === 'string') return null;
  const number = data[field];
  const restaurantId = data.restaurant_id;
  if (typeof number !== 'string' || number === '' || typeof restaurantId !== 'string') return null;
  const callId = typeof data.missed_call_id === 'string' ? data.missed_call_id : null;
  return { number, restaurantId, callId };
}

/** Whether any event of an append needs a number key (on every append: a type look-up first). */
export function needsNumberKey(events: readonly { type: unknown; data: unknown }[]): boolean {
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (
      typeof e === 'object' &&
      e !== null &&
      typeof e.type === 'string' &&
      NUMBER_TYPES.has(e.type) &&
      typeof e.data === 'object' &&
      e.data !== null &&
      numberSealing(e.type, e.data as Record<string, unknown>) !== null
    )
      return true;
  }
  return false;
}

/** The restaurants' number-index keys, cached (they are never destroyed). */
export class NumberIndex {
  private readonly keys = new Map<string, Promise<Buffer>>();
  constructor(private readonly store: KeyStore) {}

  async label(restaurantId: string, e164: string): Promise<string> {
    let key = this.keys.get(restaurantId);
    if (key === undefined) {
      key = this.store.obtain(numberIndexSubject(restaurantId));
      this.keys.set(restaurantId, key);
      key.catch(() => this.keys.delete(restaurantId));
    }
    return numberLabel(restaurantId, numberHash(await key, e164));
  }

  /** label() without making the restaurant's key: null when it has none (no call was ever linked). */
  async existingLabel(restaurantId: string, e164: string): Promise<string | null> {
    if (!this.keys.has(restaurantId)) {
      const found = await this.store.find(numberIndexSubject(restaurantId));
      if (found.state !== 'active') return null;
    }
    return this.label(restaurantId, e164);
  }
}
