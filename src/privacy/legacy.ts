// The migration of an embedded log written before the hash chain and sealing (schema 1 or 2): every
// customer event's personal fields are sealed in place with the customer's key, the keys of
// customers deleted back then are destroyed (they are erased, as deletion now means), and the chain
// is computed over the result. One write transaction (SqliteEventStore.upgradeLegacy); runs at the
// first start of the new code, before anything reads the log. EventStoreDB events cannot be
// rewritten: docs/AUDIT.md says what that leaves.
import type { SqliteEventStore } from '../adapters/event-store/sqlite';
import { KeyDestroyedError, type KeyStore } from '../ports/key-store';
import { customerSubject, SEALED_EVENT_TYPES, sealData } from './seal';

export async function upgradeLegacyLog(
  store: SqliteEventStore,
  keys: KeyStore,
  now: () => Date = () => new Date(),
): Promise<{ hashed: number; rewritten: number; erased: number }> {
  const customers = store.legacyValues(SEALED_EVENT_TYPES, 'customer_id');
  const deleted = new Set(store.legacyValues(['CustomerDeleted'], 'customer_id'));
  const byCustomer = new Map<string, Buffer | null>();
  for (const id of customers) {
    try {
      byCustomer.set(id, await keys.obtain(customerSubject(id)));
    } catch (err) {
      if (!(err instanceof KeyDestroyedError)) throw err;
      byCustomer.set(id, null);
    }
  }
  const done = store.upgradeLegacy((row) => {
    if (!SEALED_EVENT_TYPES.includes(row.type)) return null;
    const data = JSON.parse(row.data) as Record<string, unknown>;
    if (typeof data.customer_id !== 'string') return null;
    const sealed = sealData(row.type, data, byCustomer.get(data.customer_id) ?? null);
    return sealed === data ? null : JSON.stringify(sealed);
  });
  let erased = 0;
  for (const id of deleted) if (await keys.destroy(customerSubject(id), now().toISOString())) erased++;
  return { ...done, erased };
}
