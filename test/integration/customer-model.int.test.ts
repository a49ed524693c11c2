// The customer write model and read model together, without HTTP: every lifecycle command, what the
// read model shows after it, and when updated_at moves.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  addMarketingOptOut,
  blacklistCustomer,
  clearCustomerBlacklist,
  createCustomer,
  deleteCustomer,
  flagCustomerDraft,
  publishCustomerDraft,
  removeMarketingOptOut,
  updateCustomer,
} from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { findCustomer, getCustomerForReservation } from '../../queries/customers';
import { ApiError } from '../../src/core/errors';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld }>('customer model');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
});

const doc = (w: CustomerWorld, id: string) => w.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: id });

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 0;
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
}

t('a new customer has every field, normalised, and its matching keys', async ({ w }) => {
  const { customerId } = await createCustomer(
    w,
    w.restaurant,
    { name: 'Ada', email: 'Ada@Example.COM', phone_number: '06 12 34 56 78', tags: ['vip', 'vip', 'wine'] },
    w.meta,
  );
  await w.settle();
  const d = await doc(w, customerId);
  assert.ok(d);
  assert.is(d.phone_number, '+33612345678');
  assert.is(d.country_code, 'FR');
  assert.is(d.lang, 'FR');
  assert.is(d.email, 'Ada@Example.COM');
  assert.is(d.email_key, 'ada@example.com');
  assert.is(d.phone_key, '+33612345678');
  assert.equal(d.tags, ['vip', 'wine']);
  assert.is(d.note, null);
  assert.is(d.external_id, null);
  assert.equal(d.custom_fields, {});
  assert.equal(d.marketing_opt_outs, []);
  assert.is(d.blacklisted, false);
  assert.is(d.newsletter_consent, false);
  assert.is(d.created_at, '2026-03-01T10:00:00.000Z');
  assert.is(d.updated_at, d.created_at);
  assert.is(d.stats.reservation_count, 0);
  assert.is(d.stats.last_reservation_date, null);
});

t(
  'updated_at moves on every change, opt-outs and the blacklist included, and not on a no-op',
  async ({ w }) => {
    const { customerId: id } = await createCustomer(w, w.restaurant, { name: 'Bob' }, w.meta);
    await w.settle();
    const seen = [(await doc(w, id))?.updated_at];
    const step = async (run: () => Promise<{ appended: unknown[] }>, changes: boolean) => {
      w.clock.advance(60);
      const out = await run();
      assert.is(out.appended.length > 0, changes);
      await w.settle();
      seen.push((await doc(w, id))?.updated_at);
    };
    await step(() => updateCustomer(w, w.restaurant, id, { note: 'likes the terrace' }, w.meta), true);
    await step(() => updateCustomer(w, w.restaurant, id, { note: 'likes the terrace' }, w.meta), false);
    await step(() => addMarketingOptOut(w, id, 'EMAIL', 'bounced', w.meta), true);
    await step(() => addMarketingOptOut(w, id, 'EMAIL', 'bounced', w.meta), false);
    await step(() => blacklistCustomer(w, id, 'no-shows', w.meta), true);
    await step(() => clearCustomerBlacklist(w, id, w.meta), true);
    await step(() => removeMarketingOptOut(w, id, 'EMAIL', w.meta), true);
    assert.equal(seen, [
      '2026-03-01T10:00:00.000Z',
      '2026-03-01T10:01:00.000Z',
      '2026-03-01T10:01:00.000Z',
      '2026-03-01T10:03:00.000Z',
      '2026-03-01T10:03:00.000Z',
      '2026-03-01T10:05:00.000Z',
      '2026-03-01T10:06:00.000Z',
      '2026-03-01T10:07:00.000Z',
    ]);
    const d = await doc(w, id);
    assert.equal(d?.marketing_opt_outs, []);
    assert.is(d?.blacklisted, false);
  },
);

t('two changes in the same millisecond get distinct, increasing updated_at', async ({ w }) => {
  const a = await createCustomer(w, w.restaurant, { name: 'A' }, w.meta);
  const b = await createCustomer(w, w.restaurant, { name: 'B' }, w.meta);
  await w.settle();
  const da = await doc(w, a.customerId);
  const db = await doc(w, b.customerId);
  assert.is(da?.updated_at, '2026-03-01T10:00:00.000Z');
  assert.is(db?.updated_at, '2026-03-01T10:00:00.001Z');
  assert.is(db?.created_at, '2026-03-01T10:00:00.000Z');
  assert.ok((db?.sync_seq ?? 0) > (da?.sync_seq ?? 0));
});

t('null clears, tags replace, custom fields change only the named ids', async ({ w }) => {
  await w.defineFields([
    { id: 'cf_vip', name: 'VIP', type: 'SELECT', options: ['gold', 'silver'] },
    { id: 'cf_kids', name: 'Kids', type: 'NUMBER', min: 0, max: 10 },
  ]);
  const { customerId: id } = await createCustomer(
    w,
    w.restaurant,
    {
      name: 'Cy',
      email: 'cy@example.com',
      phone_number: '+44 20 7946 0958',
      tags: ['a', 'b'],
      custom_fields: { cf_vip: 'gold', cf_kids: 2 },
    },
    w.meta,
  );
  await updateCustomer(
    w,
    w.restaurant,
    id,
    { email: null, phone_number: null, tags: ['c'], custom_fields: { cf_kids: null } },
    w.meta,
  );
  await w.settle();
  const d = await doc(w, id);
  assert.is(d?.email, null);
  assert.is(d?.email_key, null);
  assert.is(d?.phone_number, null);
  assert.is(d?.phone_key, null);
  assert.is(d?.country_code, null);
  assert.equal(d?.tags, ['c']);
  assert.equal(d?.custom_fields, { cf_vip: { name: 'VIP', value: 'gold' } });
});

t('another restaurant, drafts, deleted and merged customers answer 404 to partners', async ({ w }) => {
  const other = { ...w.restaurant, _id: 'rest_b' };
  const { customerId: id } = await createCustomer(w, w.restaurant, { name: 'Dee' }, w.meta);
  assert.is(await status(updateCustomer(w, other, id, { note: 'x' }, w.meta)), 404);
  await flagCustomerDraft(w, id, 'WHATSAPP', w.meta);
  await w.settle();
  assert.is(await findCustomer(w.docs, 'rest_a', id), null);
  assert.is(await status(updateCustomer(w, w.restaurant, id, { note: 'x' }, w.meta)), 404);
  assert.is(await status(updateCustomer(w, w.restaurant, id, { note: 'x' }, w.meta, 'internal')), 0);
  await publishCustomerDraft(w, id, w.meta);
  await w.settle();
  assert.ok(await findCustomer(w.docs, 'rest_a', id));
  await deleteCustomer(w, id, 'GDPR request', w.meta);
  await w.settle();
  assert.is(await doc(w, id), null);
  assert.is(await status(updateCustomer(w, w.restaurant, id, { note: 'x' }, w.meta)), 404);
  assert.is((await deleteCustomer(w, id, null, w.meta)).appended.length, 0);
});

t(
  'a merge fills what the survivor lacks, unions opt-outs and blacklist, and redirects lookups',
  async ({ w }) => {
    const keep = await createCustomer(
      w,
      w.restaurant,
      { name: 'Eve', email: 'eve@example.com', tags: ['a'] },
      w.meta,
    );
    const gone = await createCustomer(
      w,
      w.restaurant,
      {
        name: 'Eve B.',
        email: 'other@example.com',
        phone_number: '0612345678',
        tags: ['b'],
        external_id: 'crm-9',
      },
      w.meta,
    );
    await addMarketingOptOut(w, gone.customerId, 'WHATSAPP', 'blocked', w.meta);
    await blacklistCustomer(w, gone.customerId, null, w.meta);
    const out = await mergeCustomers(w, gone.customerId, keep.customerId, w.meta);
    assert.ok(out.position);
    // Running it again finishes nothing more.
    assert.is((await mergeCustomers(w, gone.customerId, keep.customerId, w.meta)).position, null);
    await w.settle();
    const d = await doc(w, keep.customerId);
    assert.is(d?.name, 'Eve');
    assert.is(d?.email, 'eve@example.com');
    assert.is(d?.phone_number, '+33612345678');
    assert.is(d?.external_id, 'crm-9');
    assert.equal(d?.tags, ['a', 'b']);
    assert.equal(d?.marketing_opt_outs, ['WHATSAPP']);
    assert.is(d?.blacklisted, true);
    assert.is(await doc(w, gone.customerId), null);
    assert.is((await getCustomerForReservation(w.docs, 'rest_a', gone.customerId))?.id, keep.customerId);
    assert.is(await getCustomerForReservation(w.docs, 'rest_b', gone.customerId), null);
    assert.is(await status(mergeCustomers(w, keep.customerId, keep.customerId, w.meta)), 422);
  },
);

t('replaying the log into a fresh read model gives the same documents', async ({ w }) => {
  const a = await createCustomer(w, w.restaurant, { name: 'F', phone_number: '0612345678' }, w.meta);
  w.clock.advance(5);
  await updateCustomer(w, w.restaurant, a.customerId, { name: 'F2' }, w.meta);
  await addMarketingOptOut(w, a.customerId, 'EMAIL', null, w.meta);
  await w.settle();
  const before = await doc(w, a.customerId);
  const { EmbeddedDocumentStore } = await import('../../src/adapters/document-store/embedded');
  const { ProjectionRunner } = await import('../../src/projection/runner');
  const { customersProjection } = await import('../../projections/customers');
  const fresh = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(w.events, fresh, [customersProjection]);
  await runner.catchUp();
  assert.equal(await fresh.collection(CUSTOMERS).findOne({ _id: a.customerId }), before);
});

t.run();
