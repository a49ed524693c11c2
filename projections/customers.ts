// The customer read model: one document per customer with every field of spec §2.1, its matching keys,
// its sync stamp (customer-feed.ts) and its stats (customer-stats.ts, from reservation events).
// Customer events are applied once per document (its _pos); the feed and stats writes are absolute.
import { CUSTOMER_EVENT_TYPES, type CustomerEvent, type OptOutChannel } from '../commands/customers/events';
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import type { Projection } from '../src/projection/projection';
import {
  CUSTOMER_MERGES,
  CUSTOMER_RESERVATIONS,
  CUSTOMERS,
  type CustomerDoc,
  matchingKeys,
} from './customer-docs';
import { takeStamp } from './customer-feed';
import {
  applyReservationEvent,
  computeStats,
  RESERVATION_EVENT_TYPES,
  type ReservationRow,
  recomputeStats,
} from './customer-stats';

const reservationTypes = new Set<string>(RESERVATION_EVENT_TYPES);

export const customersProjection: Projection = {
  name: 'customers',
  eventTypes: [...CUSTOMER_EVENT_TYPES, ...RESERVATION_EVENT_TYPES],
  async setup(docs) {
    const customers = docs.collection(CUSTOMERS);
    // The sync feed reads whole buckets of its order (customer-feed.ts explains why not a range),
    // sync_seq a range in them, and sorts what it read by sync_seq: the embedded store keys the
    // buckets only (IndexSpec.embeddedPrefix), each bucket's ids an array, not a Map by sync_seq.
    await customers.createIndex({
      keys: { restaurant_id: 1, sync_bucket: 1, sync_seq: 1 },
      name: 'restaurant_sync',
      embeddedPrefix: 2,
    });
    // The spec's order as the collection's own: analytics consumers read this read model directly
    // (DESIGN.md), and MongoDB serves their updated_at ranges from it. The feed itself reads buckets.
    // Ranges only: the embedded store keys restaurant_id alone (IndexSpec.embeddedPrefix), which
    // restaurant_sync does already, so it keeps nothing for this one.
    await customers.createIndex({
      keys: { restaurant_id: 1, updated_at: 1, _id: 1 },
      name: 'restaurant_updated',
      embeddedPrefix: 1,
    });
    // Matching on POST /customers and inline reservation customers, and the feed's exact filters.
    await customers.createIndex({
      keys: { restaurant_id: 1, external_id: 1 },
      name: 'restaurant_external_id',
    });
    await customers.createIndex({ keys: { restaurant_id: 1, phone_key: 1 }, name: 'restaurant_phone' });
    await customers.createIndex({ keys: { restaurant_id: 1, email_key: 1 }, name: 'restaurant_email' });
    await docs
      .collection(CUSTOMER_RESERVATIONS)
      .createIndex({ keys: { restaurant_id: 1, owner_id: 1 }, name: 'restaurant_owner' });
    await docs
      .collection(CUSTOMER_MERGES)
      .createIndex({ keys: { restaurant_id: 1, into: 1 }, name: 'restaurant_into' });
  },
  async apply(event, docs) {
    if (reservationTypes.has(event.type)) await applyReservationEvent(docs, event);
    else await applyCustomerEvent(docs, event);
  },
};

const CHANNELS: readonly OptOutChannel[] = ['EMAIL', 'WHATSAPP'];

async function applyCustomerEvent(docs: DocumentStore, recorded: RecordedEvent): Promise<void> {
  const event = { type: recorded.type, data: recorded.data } as unknown as CustomerEvent;
  const { customer_id: id, restaurant_id: restaurantId, at } = event.data;
  const col = docs.collection<CustomerDoc>(CUSTOMERS);
  const pos = positionToString(recorded.position);
  const existing = await col.findOne({ _id: id });
  if (existing && existing._pos >= pos) return;
  const stamp = () => takeStamp(docs, restaurantId, at, recorded.position);
  const set = async (fields: Partial<CustomerDoc>) => {
    await col.updateOne({ _id: id }, { $set: { ...fields, ...(await stamp()), _pos: pos } });
  };
  switch (event.type) {
    case 'CustomerCreated': {
      const { profile, draft } = event.data;
      const rows = await docs
        .collection<ReservationRow>(CUSTOMER_RESERVATIONS)
        .find({ restaurant_id: restaurantId, owner_id: id });
      const stamp0 = await stamp();
      const doc: CustomerDoc = {
        _id: id,
        restaurant_id: restaurantId,
        ...profile,
        email_key: null,
        phone_key: null,
        ...matchingKeys(profile),
        marketing_opt_outs: [],
        blacklisted: false,
        draft,
        stats: computeStats(rows),
        created_at: at,
        created_seq: stamp0.sync_seq,
        ...stamp0,
        _pos: pos,
      };
      await col.replaceOne({ _id: id }, doc, { upsert: true });
      return;
    }
    case 'CustomerMergedInto':
      await absorb(docs, restaurantId, id, event.data.into_customer_id);
      await col.deleteOne({ _id: id });
      return;
    case 'CustomerDeleted':
      await col.deleteOne({ _id: id });
      return;
  }
  if (!existing) return;
  switch (event.type) {
    case 'CustomerUpdated':
      return set({ ...event.data.changes, ...matchingKeys(event.data.changes) });
    case 'CustomerBlacklisted':
      return set({ blacklisted: true });
    case 'CustomerBlacklistCleared':
      return set({ blacklisted: false });
    case 'MarketingOptOutAdded':
      return set({
        marketing_opt_outs: CHANNELS.filter(
          (c) => c === event.data.channel || existing.marketing_opt_outs.includes(c),
        ),
      });
    case 'MarketingOptOutRemoved':
      return set({ marketing_opt_outs: existing.marketing_opt_outs.filter((c) => c !== event.data.channel) });
    case 'CustomerMerged':
      // Stats first: the customer's _pos, written last, is what marks the event applied.
      await recomputeStats(docs, restaurantId, id);
      return set({
        ...event.data.changes,
        ...matchingKeys(event.data.changes),
        marketing_opt_outs: CHANNELS.filter((c) => event.data.marketing_opt_outs.includes(c)),
        blacklisted: event.data.blacklisted,
      });
    case 'CustomerDraftFlagged':
      return set({ draft: true });
    case 'CustomerDraftPublished':
      return set({ draft: false });
  }
}

/** `sourceId` now lives on in `intoId`: its reservations count there, and so does whatever it absorbed. */
async function absorb(
  docs: DocumentStore,
  restaurantId: string,
  sourceId: string,
  intoId: string,
): Promise<void> {
  const merges = docs.collection<{ _id: string; restaurant_id: string; into: string }>(CUSTOMER_MERGES);
  await merges.replaceOne(
    { _id: sourceId },
    { _id: sourceId, restaurant_id: restaurantId, into: intoId },
    { upsert: true },
  );
  await merges.updateMany({ restaurant_id: restaurantId, into: sourceId }, { $set: { into: intoId } });
  await docs
    .collection(CUSTOMER_RESERVATIONS)
    .updateMany({ restaurant_id: restaurantId, owner_id: sourceId }, { $set: { owner_id: intoId } });
  await recomputeStats(docs, restaurantId, intoId);
}
