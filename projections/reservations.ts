// The `reservations` read model: one document per reservation, the snapshot the write side folds
// (same evolve function), plus UTC copies of the instants so filters and sorting compare strings.

import type { ReservationSnapshot } from '../commands/reservations/events';
import { evolveReservation, initialReservation } from '../commands/reservations/evolve';
import { positionToString } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';
import { eraseCustomerReservations, textOwners } from './reservation-erasure';

export const RESERVATIONS = 'reservations';

export interface ReservationDoc extends ReservationSnapshot {
  _id: string;
  /** start_at as an ISO instant in UTC: start_at carries the restaurant's offset, which sorts wrong. */
  start_at_utc: string;
  /**
   * `<service_date>|<start_at_utc>|<id>`: the list order in one string field (sorting on one key is
   * half the cost of three on the embedded store). Service day first, so a page can be found by
   * walking per-day counts (reservation-days.ts); within a day, by start.
   */
  sort_key: string;
  /** Zero-padded position of the last event applied (idempotence guard). */
  _pos: string;
  [k: string]: unknown;
}

export const RESERVATION_EVENT_TYPES = [
  'ReservationCreated',
  'ReservationUpdated',
  'ReservationStatusChanged',
  'ReservationFeedbackRecorded',
  'ReservationPaymentRecorded',
  // Added 2026-11-28: moves updated_at only (commands/reservations/decide-relink.ts). Logs written
  // before hold none, so their replay builds the same documents as before.
  'ReservationCustomerRelinked',
] as const;

export const toUtc = (iso: string) => new Date(iso).toISOString();

/**
 * Version 1 writes `reservations`; version 2 (below, the same code) writes `reservations_v2`.
 * Version 2 exists because the documents changed without a new version: `text_owners` and
 * `text_owner_ids` (and the `restaurant_text_owners` index an erasure finds them by,
 * reservation-erasure.ts) were added to documents written from then on only, so a store built before
 * (MongoDB keeps its read models across restarts) held reservations taken from their customer, or
 * given feedback before a change of customer, without them: erasing the customer whose box holds their
 * text left it readable, and the read model differed from a replay (`audit verify`). Version 2 is
 * rebuilt from the whole log beside version 1, so every document has them, and takes over once caught
 * up. Version 1 keeps serving meanwhile with this same code (documents written meanwhile carry the
 * fields; an older one lacking them is blanked whole when it is the erased customer's, as before):
 * every reader reads either layout. An embedded store is rebuilt at every start into an empty store,
 * where version 2 is active at once (src/projection/versions.ts, prepare): nothing is built twice.
 * Remove version 1 once every store has switched.
 */
export const reservationsProjectionV1: Projection = {
  name: 'reservations',
  // Versioned (src/projection/versions.ts): a newer version is rebuilt beside the active one.
  collections: [RESERVATIONS],
  eventTypes: [...RESERVATION_EVENT_TYPES, 'CustomerDeleted'],
  async setup(docs) {
    const col = docs.collection(RESERVATIONS);
    await col.createIndex({ keys: { restaurant_id: 1, external_id: 1 }, name: 'restaurant_external_id' });
    await col.createIndex({ keys: { restaurant_id: 1, customer_id: 1 }, name: 'restaurant_customer' });
    // Reservations holding text in the boxes of a customer they no longer belong to (reservation-erasure.ts).
    await col.createIndex({ keys: { restaurant_id: 1, text_owner_ids: 1 }, name: 'restaurant_text_owners' });
    await col.createIndex({ keys: { restaurant_id: 1, service_date: 1 }, name: 'restaurant_service_date' });
    // Ranges and sorts only (the listing's order, updated_since): MongoDB's. The embedded store,
    // whose indexes answer equality, keys them on restaurant_id alone (IndexSpec.embeddedPrefix),
    // which restaurant_external_id already does: it keeps nothing for them.
    await col.createIndex({
      keys: { restaurant_id: 1, sort_key: 1 },
      name: 'restaurant_sort_key',
      embeddedPrefix: 1,
    });
    await col.createIndex({
      keys: { restaurant_id: 1, updated_at: 1 },
      name: 'restaurant_updated',
      embeddedPrefix: 1,
    });
    // The scheduler's scans: automatic finished / no-show across restaurants (statuses pinned,
    // start a range: the embedded store keys the status alone).
    await col.createIndex({ keys: { status: 1, start_at_utc: 1 }, name: 'status_start', embeddedPrefix: 1 });
  },
  async apply(event, docs) {
    if (event.type === 'CustomerDeleted') return eraseCustomerReservations(event, docs);
    const col = docs.collection<ReservationDoc>(RESERVATIONS);
    const id = (event.data as { reservation_id: string }).reservation_id;
    const pos = positionToString(event.position);
    const current = await col.findOne({ _id: id });
    if (current && current._pos >= pos) return; // redelivered
    if (!current && event.type !== 'ReservationCreated') return; // nothing to change
    // The stored document is the snapshot plus _id, _pos, start_at_utc and sort_key: evolve copies
    // what it changes (the document read is shared: src/projection/write-back.ts), and the four
    // fields are written anew below (no rest-destructuring copy per event).
    const state = evolveReservation(
      current ? { exists: true, abandoned: false, r: current as ReservationSnapshot } : initialReservation,
      event,
    );
    if (!state.r) return;
    // Unchanged start and day (status changes, most updates): the derived fields are the stored ones.
    // One spread, not fields added to evolve's copy: an object given four more fields keeps them
    // out of line, and every later copy and read of it was slower (measured: the replay 15 % slower).
    const same = current !== null && current.start_at === state.r.start_at;
    const start = same ? current.start_at_utc : toUtc(state.r.start_at);
    const doc: ReservationDoc = {
      ...state.r,
      _id: id,
      start_at_utc: start,
      sort_key:
        same && current.service_date === state.r.service_date
          ? current.sort_key
          : `${state.r.service_date}|${start}|${id}`,
      _pos: pos,
    };
    const owners = textOwners(current, event);
    if (owners) {
      doc.text_owners = owners.byField;
      doc.text_owner_ids = owners.ids;
    } else {
      delete doc.text_owners;
      delete doc.text_owner_ids;
    }
    await col.replaceOne({ _id: id }, doc, { upsert: true });
  },
};

/** The served version (see version 1 above): the same documents, each with its `text_owners`. */
export const reservationsProjection: Projection = { ...reservationsProjectionV1, version: 2 };
