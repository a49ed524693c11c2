// `seating_sync`: for each reservation, the seatings the capacity streams hold for it beside what the
// reservation itself says. A create, move or cancel writes two streams one after the other; when a
// process dies between them the two disagree, and this read model is how the scheduler finds them
// (the repair itself re-reads the streams: a read model never decides capacity).
import type { SeatingHeldData } from '../commands/availability/capacity-events';
import {
  RELEASED_STATUSES,
  type ReservationSnapshot,
  type ReservationStatus,
} from '../commands/reservations/events';
import { positionToString } from '../src/ports/event-store';
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

export const sameSeating = (a: SeatingFields, b: SeatingFields): boolean =>
  SEATING_FIELDS.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));

/** The reservation and its seatings agree: one seating on its day, equal to it, unless released. */
export function inSync(doc: Pick<SeatingSyncDoc, 'reservation' | 'holds'>): boolean {
  const days = Object.keys(doc.holds);
  const r = doc.reservation;
  if (!r || RELEASED_STATUSES.includes(r.status)) return days.length === 0;
  const hold = doc.holds[r.service_date];
  return days.length === 1 && hold !== undefined && sameSeating(hold, r);
}

export const seatingSyncProjection: Projection = {
  name: 'seating-sync',
  eventTypes: [
    'SeatingHeld',
    'SeatingReleased',
    'ReservationCreated',
    'ReservationUpdated',
    'ReservationStatusChanged',
  ],
  async setup(docs) {
    await docs
      .collection(SEATING_SYNC)
      .createIndex({ keys: { in_sync: 1, out_of_sync_since: 1 }, name: 'out_of_sync' });
  },
  async apply(event, docs) {
    const col = docs.collection<SeatingSyncDoc>(SEATING_SYNC);
    const d = event.data as Record<string, unknown>;
    const id = d.reservation_id as string;
    const pos = positionToString(event.position);
    const current = await col.findOne({ _id: id });
    if (current && current._pos >= pos) return;
    const doc: SeatingSyncDoc = current
      ? { ...current, holds: { ...current.holds } }
      : {
          _id: id,
          restaurant_id: d.restaurant_id as string,
          reservation: null,
          holds: {},
          in_sync: true,
          out_of_sync_since: null,
          _pos: pos,
        };
    switch (event.type) {
      case 'SeatingHeld': {
        const h = d as unknown as SeatingHeldData;
        doc.holds[h.service_date] = { ...(pickSeating(h) as SeatingFields), at: h.at };
        break;
      }
      case 'SeatingReleased':
        delete doc.holds[d.service_date as string];
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
