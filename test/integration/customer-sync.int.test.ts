// The sync feed's mechanics without HTTP: sparse orders, the exact filters, where updated_since
// starts, and cursors that carry their query.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer, deleteCustomer, updateCustomer } from '../../commands/customers/handler';
import { type FeedRequest, readFeed, type WalkLimits } from '../../queries/customer-sync';
import { ApiError } from '../../src/core/errors';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld; key: Buffer }>('customer sync feed');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
  ctx.key = randomBytes(32);
});

/** Follows next_cursor to the end; returns the ids of each page. */
async function pass(
  ctx: { w: CustomerWorld; key: Buffer },
  req: Omit<FeedRequest, 'cursor'>,
  limits?: WalkLimits,
) {
  const pages: string[][] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await readFeed(
      ctx.w.docs,
      ctx.w.restaurant,
      cursor ? { limit: req.limit, cursor } : req,
      ctx.key,
      limits,
    );
    pages.push(page.customers.map((c) => c._id));
    if (!page.has_more) return pages;
    cursor = page.next_cursor as string;
    assert.ok(pages.length < 1000);
  }
}

t('a very sparse order is crossed over several short pages that resume where they stopped', async (ctx) => {
  const { w } = ctx;
  const a = (await createCustomer(w, w.restaurant, { name: 'A' }, w.meta)).customerId;
  for (let i = 0; i < 1500; i++) await updateCustomer(w, w.restaurant, a, { note: `n${i}` }, w.meta);
  const b = (await createCustomer(w, w.restaurant, { name: 'B' }, w.meta)).customerId;
  await w.settle();
  const pages = await pass(ctx, { limit: 10 }, { maxWindow: 2, maxRounds: 2 });
  assert.ok(pages.length > 3, `${pages.length} pages`);
  assert.equal(pages.flat(), [a, b]);
  assert.equal(await pass(ctx, { limit: 10 }), [[a, b]]);
});

t('deleted customers disappear; exact filters page too', async (ctx) => {
  const { w } = ctx;
  const ids: string[] = [];
  for (let i = 0; i < 7; i++)
    ids.push(
      (await createCustomer(w, w.restaurant, { name: `c${i}`, email: 'Same@Example.com' }, w.meta))
        .customerId,
    );
  await deleteCustomer(w, ids[3] as string, null, w.meta);
  await w.settle();
  const expected = ids.filter((_, i) => i !== 3);
  assert.equal((await pass(ctx, { limit: 2, email: 'same@EXAMPLE.com' })).flat(), expected);
  assert.equal((await pass(ctx, { limit: 100 })).flat(), expected);
});

t('updated_since is inclusive and starts at the right bucket of a long order', async (ctx) => {
  const { w } = ctx;
  const ids: string[] = [];
  for (let i = 0; i < 600; i++) {
    w.clock.advance(1);
    ids.push((await createCustomer(w, w.restaurant, { name: `c${i}` }, w.meta)).customerId);
  }
  await w.settle();
  const since = new Date(Date.parse('2026-03-01T10:00:00.000Z') + 400_000).toISOString();
  // The customer created at exactly `since` is included (the 400th, index 399).
  assert.equal((await pass(ctx, { limit: 50, updated_since: since })).flat(), ids.slice(399));
  assert.equal((await pass(ctx, { limit: 50, updated_since: '2026-03-01T11:00:00+01:00' })).flat(), ids);
  assert.equal((await pass(ctx, { limit: 50, updated_since: '2030-01-01T00:00:00Z' })).flat(), []);
});

t('a cursor continues its own query: repeating its filters is fine, changing them is a 400', async (ctx) => {
  const { w, key } = ctx;
  for (let i = 0; i < 3; i++) await createCustomer(w, w.restaurant, { name: `c${i}`, tags: ['vip'] }, w.meta);
  await w.settle();
  const first = await readFeed(w.docs, w.restaurant, { limit: 1, tag: 'vip' }, key);
  const cursor = first.next_cursor as string;
  const same = await readFeed(w.docs, w.restaurant, { limit: 1, tag: 'vip', cursor }, key);
  assert.is(same.customers.length, 1);
  let status = 0;
  try {
    await readFeed(w.docs, w.restaurant, { limit: 1, tag: 'other', cursor }, key);
  } catch (err) {
    status = err instanceof ApiError ? err.status : -1;
  }
  assert.is(status, 400);
});

t.run();
