// Merges run concurrently (two operators, two CLI processes): one at a time per restaurant
// (commands/customers/merge-slot.ts), so never a cycle that loses both customers.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { followMerges } from '../../commands/customers/follow-merges';
import { createCustomer, loadCustomer } from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { MERGE_SLOT_STALE_AFTER_MS, mergeSlotStream } from '../../commands/customers/merge-slot';
import { ApiError } from '../../src/core/errors';
import type { Logger } from '../../src/logger';
import { ANY } from '../../src/ports/event-store';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld }>('customer merge races');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
});

const customer = async (w: CustomerWorld, name: string) =>
  (await createCustomer(w, w.restaurant, { name, email: `${name.toLowerCase()}@example.com` }, w.meta))
    .customerId;

const statusOf = (o: PromiseSettledResult<unknown>) =>
  o.status === 'fulfilled' ? 200 : o.reason instanceof ApiError ? o.reason.status : String(o.reason);

t('merging A into B and B into A at once: one merge wins, the other is refused (404)', async ({ w }) => {
  const a = await customer(w, 'A');
  const b = await customer(w, 'B');
  // Before: each read the other as a live survivor and closed its own source, so each was merged into
  // the other, both steps 2 failed (404 twice) and both customers were gone.
  const outcomes = await Promise.allSettled([
    mergeCustomers(w, a, b, w.meta),
    mergeCustomers(w, b, a, w.meta),
  ]);
  assert.equal(outcomes.map(statusOf).sort(), [200, 404]);
  const [winner, loser] = outcomes[0]?.status === 'fulfilled' ? [b, a] : [a, b];
  const kept = await loadCustomer(w, winner);
  assert.is(kept.status, 'active');
  assert.ok(kept.absorbed.includes(loser));
  assert.equal(await loadCustomer(w, loser).then((s) => [s.status, s.mergedInto]), ['merged', winner]);
});

t('a ring of merges started at once (A→B, B→C, C→A) leaves one live survivor for all', async ({ w }) => {
  const ids = [await customer(w, 'A'), await customer(w, 'B'), await customer(w, 'C')];
  const outcomes = await Promise.allSettled(
    ids.map((id, i) => mergeCustomers(w, id, ids[(i + 1) % 3] as string, w.meta)),
  );
  assert.equal(outcomes.map(statusOf).filter((s) => s === 200).length, 2);
  const walks = await Promise.all(ids.map((id) => followMerges(w, id)));
  assert.equal(
    walks.map((x) => [x.end, x.state.status]),
    walks.map(() => ['survivor', 'active']),
  );
  assert.is(new Set(walks.map((x) => x.customerId)).size, 1);
});

t(
  'merges of unrelated customers of one restaurant at once all succeed, one after the other',
  async ({ w }) => {
    const ids = await Promise.all(['A', 'B', 'C', 'D', 'E', 'F'].map((n) => customer(w, n)));
    const pairs = [0, 2, 4].map((i) => [ids[i] as string, ids[i + 1] as string] as const);
    const outcomes = await Promise.allSettled(
      pairs.map(([from, into]) => mergeCustomers(w, from, into, w.meta)),
    );
    assert.equal(outcomes.map(statusOf), [200, 200, 200]);
    for (const [from, into] of pairs) {
      assert.is((await loadCustomer(w, from)).mergedInto, into);
      assert.ok((await loadCustomer(w, into)).absorbed.includes(from));
    }
  },
);

t('a slot left by a merge whose process died is free once stale; a fresh one is a 409', async ({ w }) => {
  const a = await customer(w, 'A');
  const b = await customer(w, 'B');
  const held = {
    type: 'CustomerMergeSlotTaken',
    data: {
      restaurant_id: 'rest_a',
      merge_id: 'mrg_dead',
      customer_id: 'cus_x',
      into_customer_id: 'cus_y',
      at: w.clock.now().toISOString(),
    },
  };
  await w.events.append(mergeSlotStream('rest_a'), [held], ANY);
  const refused = await mergeCustomers(w, a, b, w.meta).catch((err: unknown) => err);
  assert.instance(refused, ApiError);
  assert.is((refused as ApiError).status, 409);
  assert.is((await loadCustomer(w, a)).status, 'active', 'nothing merged');
  w.clock.advance(MERGE_SLOT_STALE_AFTER_MS / 1000);
  await mergeCustomers(w, a, b, w.meta);
  assert.is((await loadCustomer(w, a)).mergedInto, b);
});

t('a slot that cannot be freed is logged; the merge it ran still answers its outcome', async ({ w }) => {
  const a = await customer(w, 'A');
  const b = await customer(w, 'B');
  const append = w.events.append.bind(w.events);
  w.events.append = (async (stream, events, expected) => {
    if (events.some((e) => e.type === 'CustomerMergeSlotFreed')) throw new Error('disk full');
    return append(stream, events, expected);
  }) as typeof w.events.append;
  const warned: string[] = [];
  const logger = { warn: (...args: unknown[]) => void warned.push(String(args[1])) } as unknown as Pick<
    Logger,
    'warn'
  >;
  // Before: the free's error replaced the merge's result (a merge that happened answered an error).
  const out = await mergeCustomers({ ...w, events: w.events, logger }, a, b, w.meta);
  assert.is(out.target.customerId, b);
  assert.is((await loadCustomer(w, a)).mergedInto, b);
  assert.is(warned.length, 1);
  // The slot held frees itself once stale; a merge refused then keeps its own refusal (404), not the
  // free's error.
  w.clock.advance(MERGE_SLOT_STALE_AFTER_MS / 1000);
  const refused = await mergeCustomers({ ...w, events: w.events, logger }, b, a, w.meta).catch(
    (err: unknown) => err,
  );
  assert.instance(refused, ApiError);
  assert.is((refused as ApiError).status, 404);
  assert.is(warned.length, 2);
});

t.run();
