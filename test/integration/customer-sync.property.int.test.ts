// The sync feed's promise, as a property: a full pass (follow next_cursor until has_more is false)
// returns every customer that existed when it started and was not deleted, however customers are
// created and updated between pages and while a page is being read, and whatever the clock does
// (same millisecond twice, jumps back as a late commit from another process would).
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer, updateCustomer } from '../../commands/customers/handler';
import { readFeed } from '../../queries/customer-sync';
import type { Collection, Doc, DocumentStore, Filter, FindOptions } from '../../src/ports/document-store';
import { customerWorld } from '../helpers/customers';

const t = suite('customer sync feed (property)');

/**
 * The embedded store answers a find in one go; MongoDB does not (a find is not a snapshot). This view
 * reads the feed's bucket lists one bucket at a time and lets writes in between, as a MongoDB cursor may.
 */
function nonAtomicFinds(docs: DocumentStore): DocumentStore {
  const yieldNow = () => new Promise((r) => setImmediate(r));
  const wrap = <T extends Doc>(col: Collection<T>): Collection<T> =>
    Object.assign(Object.create(col) as Collection<T>, {
      async find(filter: Filter, options?: FindOptions): Promise<T[]> {
        const buckets = (filter.sync_bucket as { $in?: number[] } | undefined)?.$in;
        if (!buckets) return col.find(filter, options);
        const out: T[] = [];
        for (const b of buckets) {
          await yieldNow();
          out.push(...(await col.find({ ...filter, sync_bucket: b }, options)));
        }
        return out;
      },
    });
  return Object.assign(Object.create(docs) as DocumentStore, {
    collection: <T extends Doc>(name: string) => wrap(docs.collection<T>(name)),
  });
}

const step = fc.record({
  updates: fc.array(fc.nat(), { maxLength: 6 }),
  creates: fc.nat({ max: 2 }),
  clock: fc.constantFrom('same', 'forward', 'backward'),
  /** Apply this step's writes while the page is being read rather than between pages. */
  concurrent: fc.boolean(),
});

const plan = fc.record({
  initial: fc.integer({ min: 0, max: 45 }),
  limit: fc.integer({ min: 1, max: 8 }),
  tagged: fc.boolean(),
  atomicFinds: fc.boolean(),
  steps: fc.array(step, { maxLength: 25 }),
});

t(
  'a full pass sees every customer at least once, in strictly increasing (updated_at, id) order',
  async () => {
    await fc.assert(
      fc.asyncProperty(plan, async ({ initial, limit, tagged, atomicFinds, steps }) => {
        const w = await customerWorld();
        const key = randomBytes(32);
        const ids: string[] = [];
        const tags = (i: number) => (i % 2 === 0 ? ['vip'] : []);
        for (let i = 0; i < initial; i++) {
          w.clock.advance(i % 3 === 0 ? 0 : 0.001);
          ids.push(
            (await createCustomer(w, w.restaurant, { name: `c${i}`, tags: tags(i) }, w.meta)).customerId,
          );
        }
        await w.settle();
        const expected = new Set(ids.filter((_, i) => !tagged || tags(i).length > 0));

        let counter = 0;
        const write = async (s: (typeof steps)[number]) => {
          if (s.clock === 'forward') w.clock.advance(1);
          if (s.clock === 'backward') w.clock.advance(-5);
          for (const u of s.updates)
            if (ids.length)
              await updateCustomer(
                w,
                w.restaurant,
                ids[u % ids.length] as string,
                { note: `n${++counter}` },
                w.meta,
              );
          for (let c = 0; c < s.creates; c++)
            ids.push(
              (await createCustomer(w, w.restaurant, { name: `new${++counter}`, tags: ['vip'] }, w.meta))
                .customerId,
            );
          await w.settle();
        };

        const seen = new Set<string>();
        let cursor: string | undefined;
        let last: [string, string] | null = null;
        for (let i = 0; ; i++) {
          const s = steps[i];
          const request = { limit, ...(cursor ? { cursor } : tagged ? { tag: 'vip' } : {}) };
          const docs = atomicFinds ? w.docs : nonAtomicFinds(w.docs);
          const read = () => readFeed(docs, w.restaurant, request, key);
          let page: Awaited<ReturnType<typeof readFeed>>;
          if (s?.concurrent) [page] = await Promise.all([read(), write(s)]);
          else {
            if (s) await write(s);
            page = await read();
          }
          assert.ok(page.customers.length <= limit);
          for (const c of page.customers) {
            const k: [string, string] = [c.updated_at, c._id];
            if (last) assert.ok(k[0] > last[0] || (k[0] === last[0] && k[1] > last[1]), `${k} after ${last}`);
            last = k;
            seen.add(c._id);
            if (tagged) assert.ok(c.tags.includes('vip'));
          }
          if (!page.has_more) {
            assert.is(page.next_cursor, null);
            break;
          }
          assert.ok(page.next_cursor);
          cursor = page.next_cursor;
          assert.ok(i < 10_000, 'the pass ends');
        }
        for (const id of expected) assert.ok(seen.has(id), `customer ${id} was skipped`);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 150) },
    );
  },
);

t.run();
