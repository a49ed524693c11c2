// `seating_sync`: for each reservation, the seatings the capacity streams hold for it and the
// external_ids it has claimed, beside what the reservation itself says. A create, move or cancel writes
// several streams one after the other; when a process dies between them they disagree, and this read
// model is how the scheduler finds them (the repair itself re-reads the streams: a read model never
// decides capacity or uniqueness). A create claims its external_id before holding its table, so a
// create that died in between leaves a claim with no seating and no reservation: that is out of sync
// too. A move's pending seating (SeatingMoveHeld) is out of sync until it is confirmed or dropped.
import type { SeatingHeldData, SeatingMoveHeldData } from '../commands/availability/capacity-events';
import {
  EXTERNAL_ID_CLAIM_PREFIX,
  externalIdOfClaimStream,
  RELEASED_STATUSES,
  type ReservationSnapshot,
  type ReservationStatus,
} from '../commands/reservations/events';
import type { Collection } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';

export const SEATING_SYNC = 'seating_sync';

/** The fields a seating copies from its reservation. */
export const SEATING_FIELDS = [
  'service_date',
  'shift_id',
  'room_id',
  'table_ids',
  'start_at',
  'end_at',
  'party_size',
] as const;
export type SeatingFields = Pick<SeatingHeldData, (typeof SEATING_FIELDS)[number]>;

export interface SeatingSyncDoc {
  _id: string;
  restaurant_id: string;
  reservation: (SeatingFields & { status: ReservationStatus }) | null;
  /** Active seatings by service day. */
  holds: Record<string, SeatingFields & { at: string }>;
  /**
   * External_ids whose claim stream names this reservation as owner (Claimed, not yet Released).
   * Absent on documents written before claims were followed.
   */
  claims?: { external_id: string; at: string }[];
  /** Pending moves by move id (held, not yet confirmed or dropped). Absent on older documents. */
  moves?: Record<string, SeatingFields & { at: string }>;
  in_sync: boolean;
  /** When the two sides started to disagree (event time), null while they agree. */
  out_of_sync_since: string | null;
  _pos: string;
  [k: string]: unknown;
}

export const pickSeating = (source: Partial<SeatingFields>): Partial<SeatingFields> => {
  const out: Record<string, unknown> = {};
  for (const k of SEATING_FIELDS) if (k in source) out[k] = source[k];
  return out as Partial<SeatingFields>;
};

/** Equal as their JSON would be: the fields are scalars, null or arrays of ids. */
function sameField(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameField(a[i], b[i])) return false;
    return true;
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

export const sameSeating = (a: SeatingFields, b: SeatingFields): boolean => {
  for (const k of SEATING_FIELDS) if (!sameField(a[k], b[k])) return false;
  return true;
};

/**
 * The reservation and its seatings agree: one seating on its day, equal to it, unless released. No
 * reservation: nothing held and no external_id claimed for it either.
 */
export function inSync(doc: Pick<SeatingSyncDoc, 'reservation' | 'holds' | 'claims' | 'moves'>): boolean {
  if (Object.keys(doc.moves ?? {}).length) return false;
  const days = Object.keys(doc.holds);
  const r = doc.reservation;
  if (!r) return days.length === 0 && !doc.claims?.length;
  if (RELEASED_STATUSES.includes(r.status)) return days.length === 0;
  const hold = doc.holds[r.service_date];
  return days.length === 1 && hold !== undefined && sameSeating(hold, r);
}

/**
 * Version 1, superseded by the compact layout of seating-sync-v2.ts (same decisions): kept so a store
 * built with it serves it until version 2 is rebuilt beside it and takes over.
 */
export const seatingSyncProjection: Projection = {
  name: 'seating-sync',
  collections: [SEATING_SYNC],
  eventTypes: [
    'SeatingHeld',
    'SeatingReleased',
    'SeatingMoveHeld',
    'SeatingMoveConfirmed',
    'SeatingMoveDropped',
    'ReservationCreated',
    'ReservationUpdated',
    'ReservationStatusChanged',
    // Only those of external_id claim streams (other claim streams use the same types).
    'Claimed',
    'Released',
  ],
  async setup(docs) {
    await docs
      .collection(SEATING_SYNC)
      .createIndex({ keys: { in_sync: 1, out_of_sync_since: 1 }, name: 'out_of_sync' });
  },
  async apply(event, docs) {
    const col = docs.collection<SeatingSyncDoc>(SEATING_SYNC);
    const target = await seatingTarget(event, col);
    if (target === null) return;
    const { isClaim, d, id, pos, current, restaurantId, externalId } = target;
    // A copy of what this event can change (the document read is shared: src/projection/write-back.ts).
    // Reservation and claim events change holds, claims and moves in place nowhere below (a claim
    // event writes a new claims array): those stay shared, unless the stored document lacks claims
    // or moves (older documents), which the full copy adds.
    const sharesParts =
      isClaim ||
      event.type === 'ReservationCreated' ||
      event.type === 'ReservationUpdated' ||
      event.type === 'ReservationStatusChanged';
    const doc: SeatingSyncDoc = current
      ? sharesParts && current.claims !== undefined && current.moves !== undefined
        ? { ...current }
        : {
            ...current,
            holds: { ...current.holds },
            claims: [...(current.claims ?? [])],
            moves: { ...(current.moves ?? {}) },
          }
      : {
          _id: id,
          restaurant_id: restaurantId,
          reservation: null,
          holds: {},
          claims: [],
          moves: {},
          in_sync: true,
          out_of_sync_since: null,
          _pos: pos,
        };
    switch (event.type) {
      case 'Claimed':
        doc.claims = [
          ...(doc.claims ?? []).filter((c) => c.external_id !== externalId),
          { external_id: externalId as string, at: d.at as string },
        ];
        break;
      case 'Released':
        doc.claims = (doc.claims ?? []).filter((c) => c.external_id !== externalId);
        break;
      case 'SeatingHeld': {
        const h = d as unknown as SeatingHeldData;
        doc.holds[h.service_date] = { ...(pickSeating(h) as SeatingFields), at: h.at };
        break;
      }
      case 'SeatingReleased':
        delete doc.holds[d.service_date as string];
        break;
      case 'SeatingMoveHeld': {
        const h = d as unknown as SeatingMoveHeldData;
        doc.moves = { ...doc.moves, [h.move_id]: { ...(pickSeating(h) as SeatingFields), at: h.at } };
        break;
      }
      case 'SeatingMoveConfirmed': {
        const h = d as unknown as SeatingMoveHeldData;
        doc.holds[h.service_date] = { ...(pickSeating(h) as SeatingFields), at: h.at };
        delete doc.moves?.[h.move_id];
        break;
      }
      case 'SeatingMoveDropped':
        delete doc.moves?.[d.move_id as string];
        break;
      case 'ReservationCreated': {
        const r = d.reservation as ReservationSnapshot;
        doc.reservation = { ...(pickSeating(r) as SeatingFields), status: r.status };
        break;
      }
      case 'ReservationUpdated':
        if (doc.reservation)
          doc.reservation = { ...doc.reservation, ...pickSeating(d.changes as Partial<SeatingFields>) };
        break;
      case 'ReservationStatusChanged':
        if (doc.reservation) doc.reservation = { ...doc.reservation, status: d.to as ReservationStatus };
        break;
    }
    const agree = inSync(doc);
    doc.out_of_sync_since = agree ? null : (current?.out_of_sync_since ?? (d.at as string));
    doc.in_sync = agree;
    doc._pos = pos;
    await col.replaceOne({ _id: id }, doc, { upsert: true });
  },
};

/**
 * Which seating_sync document an event changes (both versions): null for a claim of another kind of
 * stream, an event without a reservation, one the document has already seen (its _pos), or a claim
 * whose restaurant is not known (no restaurant_id in its metadata: it cannot be repaired).
 */
export interface SeatingTarget<T> {
  isClaim: boolean;
  d: Record<string, unknown>;
  id: string;
  pos: string;
  current: T | null;
  restaurantId: string;
  externalId: string | null;
}

export async function seatingTarget<T extends { _id: string; _pos: string; restaurant_id: string }>(
  event: RecordedEvent,
  col: Collection<T>,
): Promise<SeatingTarget<T> | null> {
  const isClaim = event.type === 'Claimed' || event.type === 'Released';
  if (isClaim && !event.stream.startsWith(EXTERNAL_ID_CLAIM_PREFIX)) return null;
  const d = event.data as Record<string, unknown>;
  // A claim's owner is the reservation id.
  const id = (isClaim ? d.owner : d.reservation_id) as string;
  if (typeof id !== 'string') return null;
  const pos = positionToString(event.position);
  const current = await col.findOne({ _id: id });
  if (current && current._pos >= pos) return null;
  const restaurantId =
    current?.restaurant_id ?? ((isClaim ? event.metadata.restaurant_id : d.restaurant_id) as string);
  const externalId = isClaim && restaurantId ? externalIdOfClaimStream(restaurantId, event.stream) : null;
  if (isClaim && externalId === null) return null;
  return { isClaim, d, id, pos, current, restaurantId, externalId };
}
