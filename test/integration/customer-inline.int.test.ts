// Inline reservation customers (spec §4 POST /reservations), through the API the reservations module
// calls: phone then email (never external_id), the restaurant's matching setting, consent kept on
// return_existing, contact details never cleared on update, and checks that never write.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  blacklistCustomer,
  createCustomer,
  deleteCustomer,
  loadCustomer,
} from '../../commands/customers/handler';
import {
  checkInlineCustomer,
  type InlineCustomer,
  type OnMatch,
  resolveInlineCustomer,
} from '../../commands/customers/inline';
import { mergeCustomers } from '../../commands/customers/merge';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { ApiError } from '../../src/core/errors';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld }>('inline reservation customers');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
});

const resolve = (w: CustomerWorld, inline: InlineCustomer, onMatch?: OnMatch, matching = true) =>
  resolveInlineCustomer(
    w,
    w.docs,
    { ...w.restaurant, customer_matching: matching },
    inline,
    onMatch,
    w.meta,
  ).then(async (r) => {
    await w.settle();
    return r;
  });
const doc = (w: CustomerWorld, id: string) => w.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: id });
const head = (w: CustomerWorld) => w.events.headPosition();

async function existing(w: CustomerWorld, input: InlineCustomer) {
  const { customerId } = await createCustomer(w, w.restaurant, input, w.meta);
  await w.settle();
  return customerId;
}

t('matched on phone (any spelling) before email, never on external_id', async ({ w }) => {
  const byPhone = await existing(w, { name: 'P', phone_number: '+33 6 12 34 56 78' });
  const byEmail = await existing(w, { name: 'E', email: 'e@example.com', external_id: 'crm-1' });
  const both = await resolve(w, { name: 'x', phone_number: '06 12 34 56 78', email: 'E@example.com' });
  assert.equal([both.customerId, both.result], [byPhone, 'matched']);
  assert.is((await resolve(w, { name: 'x', email: 'E@EXAMPLE.com' })).customerId, byEmail);
  const external = await resolve(w, { name: 'x', external_id: 'crm-1' });
  assert.is(external.result, 'created');
  assert.is.not(external.customerId, byEmail);
});

t('on_match omitted follows the restaurant: match, or always create when matching is off', async ({ w }) => {
  const id = await existing(w, { name: 'M', phone_number: '0611111111' });
  assert.is((await resolve(w, { name: 'x', phone_number: '0611111111' })).customerId, id);
  const off = await resolve(w, { name: 'x', phone_number: '0611111111' }, undefined, false);
  assert.is(off.result, 'created');
  assert.is.not(off.customerId, id);
  // An explicit on_match wins over the setting.
  assert.is(
    (await resolve(w, { name: 'x', phone_number: '0611111111' }, 'return_existing', false)).customerId,
    id,
  );
});

t('return_existing writes nothing, except a newsletter consent the guest just gave', async ({ w }) => {
  const id = await existing(w, { name: 'R', email: 'r@example.com' });
  const before = await head(w);
  const plain = await resolve(w, {
    name: 'Other',
    email: 'r@example.com',
    newsletter_consent: false,
    note: 'x',
  });
  assert.equal([plain.result, plain.position], ['matched', null]);
  assert.is(await head(w), before);
  const consent = await resolve(w, { name: 'Other', email: 'r@example.com', newsletter_consent: true });
  assert.is(consent.result, 'matched');
  assert.ok(consent.position);
  const d = await doc(w, id);
  assert.is(d?.newsletter_consent, true);
  assert.is(d?.name, 'R');
  assert.is(d?.note, null);
});

t('update writes the details given but an empty email or phone never clears one', async ({ w }) => {
  const id = await existing(w, { name: 'U', email: 'u@example.com', phone_number: '0622222222' });
  const out = await resolve(
    w,
    { name: 'U Renamed', email: '', phone_number: '0622222222', lang: 'EN' },
    'update',
  );
  assert.equal([out.customerId, out.result], [id, 'updated']);
  const nulls = await resolve(w, { name: 'U Renamed', email: null, phone_number: '+33622222222' }, 'update');
  assert.is(nulls.customerId, id);
  const d = await doc(w, id);
  assert.is(d?.name, 'U Renamed');
  assert.is(d?.lang, 'EN');
  assert.is(d?.email, 'u@example.com');
  assert.is(d?.phone_number, '+33622222222');
  const byEmail = await resolve(w, { name: 'U', phone_number: '', email: 'u@example.com' }, 'update');
  assert.is(byEmail.customerId, id);
  assert.is((await doc(w, id))?.phone_number, '+33622222222');
});

t('create_new always creates; empty contact details are stored as null', async ({ w }) => {
  const id = await existing(w, { name: 'C', phone_number: '0633333333' });
  const out = await resolve(w, { name: 'C', phone_number: '0633333333', email: '' }, 'create_new');
  assert.is(out.result, 'created');
  assert.is.not(out.customerId, id);
  const fresh = await resolve(w, { name: 'Fresh', phone_number: '', email: '' });
  assert.is((await doc(w, fresh.customerId))?.email, null);
  assert.is((await doc(w, fresh.customerId))?.phone_number, null);
});

t('a blacklisted match is reported by the check and left untouched by resolve', async ({ w }) => {
  const id = await existing(w, { name: 'B', phone_number: '0644444444' });
  await blacklistCustomer(w, id, null, w.meta);
  await w.settle();
  const plan = await checkInlineCustomer(
    w,
    w.docs,
    w.restaurant,
    { name: 'B', phone_number: '06 44 44 44 44' },
    'update',
  );
  assert.equal(plan, { action: 'update', customerId: id, matchedOn: 'phone', blacklisted: true });
  const before = await head(w);
  const out = await resolve(
    w,
    { name: 'B2', phone_number: '0644444444', newsletter_consent: true },
    'update',
  );
  assert.equal(out, { customerId: id, blacklisted: true, result: 'matched', position: null });
  assert.is(await head(w), before);
});

t(
  'create_new (asked for, or matching off) still reports a blacklisted match and creates nothing',
  async ({ w }) => {
    const id = await existing(w, { name: 'B', email: 'black@example.com' });
    await blacklistCustomer(w, id, null, w.meta);
    await w.settle();
    const before = await head(w);
    for (const [onMatch, matching] of [
      ['create_new', true],
      [undefined, false],
    ] as const) {
      const restaurant = { ...w.restaurant, customer_matching: matching };
      const inline = { name: 'Twin', email: 'BLACK@example.com' };
      const plan = await checkInlineCustomer(w, w.docs, restaurant, inline, onMatch);
      assert.equal(plan, { action: 'create', customerId: id, matchedOn: 'email', blacklisted: true });
      const out = await resolve(w, inline, onMatch, matching);
      assert.equal(out, { customerId: id, blacklisted: true, result: 'matched', position: null });
    }
    assert.is(await head(w), before);
  },
);

t('checking never writes, and refuses bad details before anything is written', async ({ w }) => {
  const before = await head(w);
  const plan = await checkInlineCustomer(
    w,
    w.docs,
    w.restaurant,
    { name: 'New', email: 'new@example.com' },
    undefined,
  );
  assert.equal(plan, { action: 'create', customerId: null, matchedOn: null, blacklisted: false });
  const status = async (inline: InlineCustomer) => {
    try {
      await checkInlineCustomer(w, w.docs, w.restaurant, inline, undefined);
      return 0;
    } catch (err) {
      return err instanceof ApiError ? err.status : -1;
    }
  };
  assert.is(await status({ name: '' }), 400);
  assert.is(await status({ name: 'x', phone_number: '12' }), 400);
  assert.is(await status({ name: 'x', custom_fields: { cf_unknown: 1 } }), 422);
  assert.is(await head(w), before);
});

t(
  'a match the read model still shows but deleted or merged away: never linked, never lost',
  async ({ w }) => {
    // Deleted after the read model showed it: the guest's details make a new customer, where the
    // reservation used to link the deleted id (shown as no customer at all) and drop the details.
    const gone = await existing(w, { name: 'Gone', phone_number: '+33 6 21 21 21 21' });
    await deleteCustomer(w, gone, null, w.meta);
    // The read model is kept as it is (still showing the deleted customer), the customer each
    // resolution creates included.
    const stale = { ...w, settle: async () => {} };
    for (const onMatch of ['return_existing', 'update'] as const) {
      const r = await resolveInlineCustomer(
        stale,
        w.docs,
        w.restaurant,
        { name: 'Back', phone_number: '06 21 21 21 21' },
        onMatch,
        w.meta,
      );
      assert.is(r.result, 'created', onMatch);
      assert.is.not(r.customerId, gone);
      assert.is((await loadCustomer(w, r.customerId)).profile?.name, 'Back');
    }
    // Merged away: the survivor is the match (its blacklist included), never the absorbed id.
    const dup = await existing(w, { name: 'Dup', email: 'dup@example.com' });
    const kept = await existing(w, { name: 'Kept', email: 'kept@example.com' });
    await blacklistCustomer(w, kept, 'no-shows', w.meta);
    // Stale too: the merge's reservations step (commands/reservations/relink.ts) would settle it.
    await mergeCustomers(stale, dup, kept, w.meta);
    const plan = await checkInlineCustomer(
      w,
      w.docs,
      w.restaurant,
      { name: 'x', email: 'dup@example.com' },
      'update',
    );
    assert.equal([plan.customerId, plan.blacklisted], [kept, true]);
  },
);

t(
  'a match merged away along a long chain resolves to its survivor (one hop limit, followMerges)',
  async ({ w }) => {
    // Inline matching gave up after 16 merges (a new customer was created for the guest) while missed
    // calls followed 20 and the re-match any number: one walk now, with one limit (MAX_MERGE_HOPS).
    const ids: string[] = [];
    for (let i = 0; i <= 20; i++) ids.push(await existing(w, { name: `C${i}`, email: `c${i}@example.com` }));
    // Not settled: the read model still shows c0 with its email, as a concurrent merge leaves it.
    // (The merge's reservations step would settle it: not here.)
    const stale = { ...w, settle: async () => {} };
    for (let i = 0; i < 20; i++) await mergeCustomers(stale, ids[i] as string, ids[i + 1] as string, w.meta);
    const plan = await checkInlineCustomer(
      w,
      w.docs,
      w.restaurant,
      { name: 'x', email: 'c0@example.com' },
      'update',
    );
    assert.is(plan.action, 'update');
    assert.is(plan.customerId, ids[20]);
  },
);

t(
  'concurrent reservations of one new guest make one customer: matching waits for the one before (as POST /customers)',
  async ({ w }) => {
    // A widget's double submit, a partner booking a guest's evenings in parallel: each used to match
    // nobody on the read model and create a customer of its own (six for six calls). The spellings of
    // the number differ: its key, not its text, is what they share.
    const guests: InlineCustomer[] = [
      { name: 'Nouveau', phone_number: '+33 6 98 76 54 32' },
      { name: 'Nouveau', phone_number: '06 98 76 54 32' },
      { name: 'Nouveau', phone_number: '+33698765432', email: 'nouveau@example.com' },
      { name: 'Nouveau', phone_number: '+33698765432' },
      { name: 'Nouveau', phone_number: '0698765432', newsletter_consent: true },
      { name: 'Nouveau', phone_number: '0698765432' },
    ];
    const all = await Promise.all(
      guests.map((g) => resolveInlineCustomer(w, w.docs, w.restaurant, g, undefined, w.meta)),
    );
    const ids = new Set(all.map((r) => r.customerId));
    assert.is(ids.size, 1, `customers made: ${[...ids].join(', ')}`);
    assert.equal(
      all.map((r) => r.result),
      ['created', 'matched', 'matched', 'matched', 'matched', 'matched'],
    );
    await w.settle();
    assert.is((await doc(w, [...ids][0] as string))?.newsletter_consent, true);
  },
);

t.run();
