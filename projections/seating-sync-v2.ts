// `seating_sync` version 2: the same decisions as version 1 (seating-sync.ts: which reservations
// disagree with their seatings or external_id claims, and since when) in a compact document. A
// replay keeps one of these per reservation ever made, and version 1's layout (the reservation's
// seating and every held seating as objects of seven fields with their own table_ids array and
// event time, claims as objects) was the largest read model of a 1,000,000-event replay (1.2 KB a
// reservation). Version 2 keeps each seating as one string, `seatingText` (the seven fields as a
// JSON array, so two seatings are the same exactly when their texts are equal), a hold that equals
// the reservation's seating shares its string, claims are the external_ids alone, and empty holds,
// claims and moves are null. Nothing reads the event times version 1 kept per hold and claim (the
// repair re-reads the streams), so they are not kept. Readers: `seatingSyncParts` reads either layout.
import type { SeatingHeldData, SeatingMoveHeldData } from '../commands/availability/capacity-events';
import {
  RELEASED_STATUSES,
  type ReservationSnapshot,
  type ReservationStatus,
} from '../commands/reservations/events';
import type { Projection } from '../src/projection/projection';
import {
  SEATING_FIELDS,
  SEATING_SYNC,
  type SeatingFields,
  type SeatingSyncDoc,
  type SeatingTarget,
  seatingSyncProjection,
  seatingTarget,
} from './seating-sync';

export interface SeatingSyncDocV2 {
  _id: string;
  restaurant_id: string;
  /** The reservation's seating as `seatingText`; null until ReservationCreated. */
  seat: string | null;
  /** The reservation's status; null until ReservationCreated. */
  status: ReservationStatus | null;
  /** Active seatings: service day → `seatingText` (the reservation's own string when equal); null for none. */
  holds: Record<string, string> | null;
  /** External_ids whose claim stream names this reservation as owner, in claim order; null for none. */
  claims: string[] | null;
  /** Pending moves: move id → `seatingText`; null for none. */
  moves: Record<string, string> | null;
  in_sync: boolean;
  /** When the two sides started to disagree (event time), null while they agree. */
  out_of_sync_since: string | null;
  _pos: string;
  [k: string]: unknown;
}

/** A seating's seven fields as one string: equal texts ⇔ equal seatings (fields are scalars or id arrays). */
export const seatingText = (s: Partial<SeatingFields>): string =>
  JSON.stringify(SEATING_FIELDS.map((k) => s[k] ?? null));

export const seatingOfText = (text: string): SeatingFields => {
  const values = JSON.parse(text) as unknown[];
  const out: Record<string, unknown> = {};
  SEATING_FIELDS.forEach((k, i) => {
    out[k] = values[i];
  });
  return out as unknown as SeatingFields;
};

// The first field, a service day (YYYY-MM-DD: nothing to unescape), without parsing the rest.
export const serviceDateOfText = (text: string): string =>
  text.startsWith('["') ? text.slice(2, text.indexOf('"', 2)) : String((JSON.parse(text) as unknown[])[0]);

/** Version 1's inSync on the compact layout. */
export function inSyncV2(
  doc: Pick<SeatingSyncDocV2, 'seat' | 'status' | 'holds' | 'claims' | 'moves'>,
): boolean {
  if (doc.moves !== null) return false;
  const holds = doc.holds;
  if (doc.seat === null) return holds === null && doc.claims === null;
  if (RELEASED_STATUSES.includes(doc.status as ReservationStatus)) return holds === null;
  if (holds === null) return false;
  let n = 0;
  for (const _ in holds) if (++n > 1) return false;
  return holds[serviceDateOfText(doc.seat)] === doc.seat;
}

/** What the repair needs from a `seating_sync` document of either version: the days to look at and the claims. */
export function seatingSyncParts(doc: SeatingSyncDoc | SeatingSyncDocV2): {
  days: string[];
  claims: string[];
} {
  if ('seat' in doc && !('reservation' in doc)) {
    const v2 = doc as SeatingSyncDocV2;
    return {
      days: [
        ...Object.keys(v2.holds ?? {}),
        ...Object.values(v2.moves ?? {}).map(serviceDateOfText),
        ...(v2.seat !== null ? [serviceDateOfText(v2.seat)] : []),
      ],
      claims: [...(v2.claims ?? [])],
    };
  }
  const v1 = doc as SeatingSyncDoc;
  return {
    days: [
      ...Object.keys(v1.holds),
      ...Object.values(v1.moves ?? {}).map((m) => m.service_date),
      ...(v1.reservation ? [v1.reservation.service_date] : []),
    ],
    claims: (v1.claims ?? []).map((c) => c.external_id),
  };
}

/** Without `key`, null when nothing is left. */
export function without<V>(o: Record<string, V> | null, key: string): Record<string, V> | null {
  if (o === null || !(key in o)) return o;
  const out: Record<string, V> = {};
  let n = 0;
  for (const k in o)
    if (k !== key) {
      out[k] = o[k] as V;
      n++;
    }
  return n === 0 ? null : out;
}

/** `list` without `value`, in an array of its own length (filter's result keeps room to grow: 16 slots). */
function kept(list: readonly string[], value: string | null): string[] {
  let n = 0;
  for (const c of list) if (c !== value) n++;
  const out = new Array<string>(n);
  let i = 0;
  for (const c of list) if (c !== value) out[i++] = c;
  return out;
}

export const withEntry = (
  o: Record<string, string> | null,
  key: string,
  value: string,
): Record<string, string> => (o === null ? { [key]: value } : { ...o, [key]: value });

export const seatingSyncProjectionV2: Projection = {
  name: seatingSyncProjection.name,
  version: 2,
  collections: [SEATING_SYNC],
  eventTypes: seatingSyncProjection.eventTypes,
  setup: seatingSyncProjection.setup,
  async apply(event, docs) {
    const col = docs.collection<SeatingSyncDocV2>(SEATING_SYNC);
    const target = await seatingTarget(event, col);
    if (target === null) return;
    await col.replaceOne({ _id: target.id }, nextSeatingSyncV2(event.type, target), { upsert: true });
  },
};

/**
 * The version 2 document after one event (a new object: the one read is shared,
 * src/projection/write-back.ts). Version 3 (seating-sync-v3.ts) builds on it.
 */
export function nextSeatingSyncV2(type: string, target: SeatingTarget<SeatingSyncDocV2>): SeatingSyncDocV2 {
  const { d, id, pos, current, restaurantId, externalId } = target;
  // A new document (the one read is shared: src/projection/write-back.ts); holds, claims and moves
  // are replaced, never changed in place.
  let seat = current?.seat ?? null;
  let status = current?.status ?? null;
  let holds = current?.holds ?? null;
  let claims = current?.claims ?? null;
  let moves = current?.moves ?? null;
  // A hold equal to the reservation's seating keeps the reservation's string (one copy in memory).
  const held = (s: Partial<SeatingFields>) => {
    const text = seatingText(s);
    return text === seat ? seat : text;
  };
  switch (type) {
    case 'Claimed':
      claims = claims === null ? [externalId as string] : [...kept(claims, externalId), externalId as string];
      break;
    case 'Released':
      if (claims !== null) {
        const left = kept(claims, externalId);
        claims = left.length ? left : null;
      }
      break;
    case 'SeatingHeld': {
      const h = d as unknown as SeatingHeldData;
      holds = withEntry(holds, h.service_date, held(h));
      break;
    }
    case 'SeatingReleased':
      holds = without(holds, d.service_date as string);
      break;
    case 'SeatingMoveHeld': {
      const h = d as unknown as SeatingMoveHeldData;
      moves = withEntry(moves, h.move_id, seatingText(h));
      break;
    }
    case 'SeatingMoveConfirmed': {
      const h = d as unknown as SeatingMoveHeldData;
      holds = withEntry(holds, h.service_date, held(h));
      moves = without(moves, h.move_id);
      break;
    }
    case 'SeatingMoveDropped':
      moves = without(moves, d.move_id as string);
      break;
    case 'ReservationCreated': {
      const r = d.reservation as ReservationSnapshot;
      seat = seatingText(r);
      status = r.status;
      break;
    }
    case 'ReservationUpdated': {
      if (seat === null) break;
      const changes = d.changes as Partial<SeatingFields>;
      let touches = false;
      for (const k of SEATING_FIELDS) if (k in changes) touches = true;
      if (!touches) break;
      const text = seatingText({ ...seatingOfText(seat), ...changes });
      if (text !== seat) seat = text;
      break;
    }
    case 'ReservationStatusChanged':
      if (seat !== null) status = d.to as ReservationStatus;
      break;
  }
  // A hold made before its reservation (a create holds, then records) or equal to it again after an
  // update keeps the reservation's string instead of its own copy.
  if (seat !== null && holds !== null && seat !== current?.seat) {
    const day = serviceDateOfText(seat);
    if (holds[day] === seat) holds = { ...holds, [day]: seat };
  }
  const next = { seat, status, holds, claims, moves };
  const agree = inSyncV2(next);
  const doc: SeatingSyncDocV2 = {
    _id: id,
    // As version 1: a document keeps the restaurant it was made with (null when its first event had none).
    restaurant_id: current ? current.restaurant_id : restaurantId,
    seat,
    status,
    holds,
    claims,
    moves,
    in_sync: agree,
    out_of_sync_since: agree ? null : (current?.out_of_sync_since ?? (d.at as string)),
    _pos: pos,
  };
  return doc;
}
