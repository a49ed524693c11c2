// The migration of an embedded log written before sealing (docs/AUDIT.md, "Migration of existing
// events"), run at the first start of the new code, before anything reads the log:
// 1. schema 1 or 2 (before the hash chain and sealing): every customer event's personal fields are
//    sealed in place with the customer's key, the keys of customers deleted back then are destroyed
//    (they are erased, as deletion now means), and the chain is computed over the result
//    (SqliteEventStore.upgradeLegacy);
// 2. schema 3 (customer events sealed, reservation events and webhook fan-outs not yet): what guests
//    wrote on reservations is sealed with the reservation's customer's key, a webhook fan-out's bodies
//    with the key of the customer its source event concerns (recorded as its `customer_id`), and the
//    streams are re-chained over the result (SqliteEventStore.upgradeSealing);
// 3. schema 4: missed-call events sealed in place, caller streams renamed to a keyed hash of the number
//    (missed-call-migration.ts, SqliteEventStore.upgradeStreams);
// 4. schema 5: missed-call events whose number no customer owned (left in clear by step 3) sealed in
//    place with keys of their own, linked from the number (sealUnownedCallsInPlace,
//    SqliteEventStore.sealUnownedInPlace).
// Each step is one write transaction. Keys are fetched (or created) before it, by a read of the log; a
// step whose log grew meanwhile (another process appended) is planned again (untilPlanHolds).
// EventStoreDB events cannot be rewritten: the sealing layer erases such events on read instead
// (sealing-event-store.ts); docs/AUDIT.md says what that leaves.
import type { SqliteEventStore } from '../adapters/event-store/sqlite';
import { KeyDestroyedError, type KeyStore } from '../ports/key-store';
import { untilPlanHolds } from './migration-plan';
import {
  type MissedCallMigration,
  sealMissedCallsInPlace,
  sealUnownedCallsInPlace,
} from './missed-call-migration';
import {
  CUSTOMER_EVENT_TYPES,
  customerSubject,
  hasPersonalFields,
  isSealedType,
  SEALED_EVENT_TYPES,
  sealData,
} from './seal';
import { reservationCustomerAfter } from './sealing-event-store';

const FANOUT = 'WebhookDeliveriesScheduled';

async function keysOf(keys: KeyStore, customers: Iterable<string>): Promise<Map<string, Buffer | null>> {
  const out = new Map<string, Buffer | null>();
  for (const id of customers) {
    if (out.has(id)) continue;
    try {
      out.set(id, await keys.obtain(customerSubject(id)));
    } catch (err) {
      if (!(err instanceof KeyDestroyedError)) throw err;
      out.set(id, null);
    }
  }
  return out;
}

/** What step 2 needs, from two reads of the log: whose key seals each row that holds personal data. */
async function sealingPlan(store: SqliteEventStore): Promise<Map<string, string>> {
  // Fan-outs in clear, by the id of the event they published.
  const fanouts = new Map<string, string[]>();
  for await (const e of store.readAll({ batchSize: 5000 }))
    if (e.type === FANOUT && !('sealed' in e.data) && typeof e.data.customer_id !== 'string') {
      const source = String(e.data.source_event_id);
      fanouts.set(source, [...(fanouts.get(source) ?? []), e.id]);
    }
  const byEvent = new Map<string, string>();
  const streams = new Map<string, string | null>();
  for await (const e of store.readAll({ batchSize: 5000 })) {
    let customer: string | null = null;
    if (e.type.startsWith('Reservation')) {
      const after = reservationCustomerAfter(e.type, e.data);
      if (after !== undefined) streams.set(e.stream, after);
      customer = streams.get(e.stream) ?? null;
    } else if (typeof e.data.customer_id === 'string') customer = e.data.customer_id;
    if (customer === null) continue;
    for (const fanout of fanouts.get(e.id) ?? []) byEvent.set(fanout, customer);
    if (
      isSealedType(e.type) &&
      e.type !== FANOUT &&
      !('sealed' in e.data) &&
      hasPersonalFields(e.type, e.data)
    )
      byEvent.set(e.id, customer);
  }
  return byEvent;
}

export async function upgradeLegacyLog(
  store: SqliteEventStore,
  keys: KeyStore,
  now: () => Date = () => new Date(),
): Promise<
  {
    hashed: number;
    rewritten: number;
    erased: number;
    resealed: number;
    missed_call_rows_number_sealed: number;
  } & MissedCallMigration
> {
  let done = { hashed: 0, rewritten: 0 };
  let erased = 0;
  if (store.schemaVersion < 3) {
    let deleted = new Set<string>();
    done = await untilPlanHolds(store, async (plannedAt) => {
      const customers = store.legacyValues(CUSTOMER_EVENT_TYPES, 'customer_id');
      deleted = new Set(store.legacyValues(['CustomerDeleted'], 'customer_id'));
      const byCustomer = await keysOf(keys, customers);
      return store.upgradeLegacy((row) => {
        if (!CUSTOMER_EVENT_TYPES.includes(row.type)) return null;
        const data = JSON.parse(row.data) as Record<string, unknown>;
        if (typeof data.customer_id !== 'string') return null;
        const sealed = sealData(row.type, data, byCustomer.get(data.customer_id) ?? null);
        return sealed === data ? null : JSON.stringify(sealed);
      }, plannedAt);
    });
    for (const id of deleted) if (await keys.destroy(customerSubject(id), now().toISOString())) erased++;
  }
  let resealed = 0;
  if (store.schemaVersion < 4) {
    resealed = await untilPlanHolds(store, async (plannedAt) => {
      const byEvent = await sealingPlan(store);
      const byCustomer = await keysOf(keys, byEvent.values());
      return store.upgradeSealing(
        SEALED_EVENT_TYPES,
        (row) => {
          const customer = byEvent.get(row.id);
          if (customer === undefined) return null;
          let data = JSON.parse(row.data) as Record<string, unknown>;
          if ('sealed' in data) return null;
          // A fan-out names the customer whose key seals it, as the publisher now writes it.
          if (row.type === FANOUT) data = { ...data, customer_id: customer };
          const sealed = sealData(row.type, data, byCustomer.get(customer) ?? null, customer);
          return sealed === data && row.type !== FANOUT ? null : JSON.stringify(sealed);
        },
        plannedAt,
      ).rewritten;
    });
  }
  const missedCalls = await sealMissedCallsInPlace(store, keys, now);
  const unowned = await sealUnownedCallsInPlace(store, keys);
  return {
    ...done,
    erased,
    resealed,
    ...missedCalls,
    missed_call_rows_number_sealed: unowned.missed_call_rows_number_sealed,
    rows_rechained: missedCalls.rows_rechained + unowned.rows_rechained,
  };
}
