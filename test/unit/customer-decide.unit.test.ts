// Pure decisions: what each command appends on a given state, and what it refuses.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ProfileInput } from '../../commands/customers/bounds';
import {
  decideAddOptOut,
  decideBlacklist,
  decideClearBlacklist,
  decideCreate,
  decideDelete,
  decideRemoveOptOut,
  decideUpdate,
} from '../../commands/customers/decide';
import { decideAbsorb, decideMergeInto, mergedProfile } from '../../commands/customers/decide-merge';
import { type CustomerProfile, webhookTypeOf } from '../../commands/customers/events';
import { prepareProfile, type WriteContext } from '../../commands/customers/prepare';
import { type CustomerState, evolveCustomer, initialCustomer } from '../../commands/customers/state';
import { ApiError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';

const t = suite('customer decisions');
const at = '2026-03-01T10:00:00.000Z';
const ctx: WriteContext = {
  restaurantId: 'rest_a',
  country: 'FR',
  definitions: [{ id: 'cf_vip', name: 'VIP', type: 'SELECT', options: ['gold'] }],
};

const fold = (events: NewEvent[], from: CustomerState = initialCustomer) =>
  events.reduce((s, e) => evolveCustomer(s, e as unknown as RecordedEvent), from);
const created = (input: ProfileInput & { name: string }, id = 'cus_1') =>
  fold(decideCreate(initialCustomer, id, input, ctx, { draft: false, origin: 'API' }, at));

function status(run: () => unknown): number {
  try {
    run();
    return 0;
  } catch (err) {
    return err instanceof ApiError ? err.status : -1;
  }
}

t('create: the whole profile, normalised; an existing id is a conflict', () => {
  const [e] = decideCreate(
    initialCustomer,
    'cus_1',
    { name: 'A', phone_number: '0612345678' },
    ctx,
    { draft: true, origin: 'CHANNEL' },
    at,
  );
  assert.is(e?.type, 'CustomerCreated');
  assert.equal(e?.metadata, { restaurant_id: 'rest_a' });
  const data = e?.data as { profile: CustomerProfile; draft: boolean };
  assert.equal(data.profile, {
    name: 'A',
    email: null,
    phone_number: '+33612345678',
    country_code: 'FR',
    lang: 'FR',
    tags: [],
    note: null,
    custom_fields: {},
    newsletter_consent: false,
    external_id: null,
  });
  assert.is(data.draft, true);
  assert.is(
    status(() =>
      decideCreate(created({ name: 'A' }), 'cus_1', { name: 'B' }, ctx, { draft: false, origin: 'API' }, at),
    ),
    409,
  );
  assert.is(
    status(() =>
      decideCreate(initialCustomer, 'cus_1', { name: '' }, ctx, { draft: false, origin: 'API' }, at),
    ),
    400,
  );
  assert.is(
    status(() =>
      decideCreate(
        initialCustomer,
        'cus_1',
        { name: 'A', custom_fields: { cf_vip: 'x' } },
        ctx,
        { draft: false, origin: 'API' },
        at,
      ),
    ),
    422,
  );
});

t('update: only differing fields, with their previous values; nothing when nothing differs', () => {
  const s = created({ name: 'A', email: 'a@b.co', tags: ['x'], custom_fields: { cf_vip: 'gold' } });
  const [e] = decideUpdate(
    s,
    'cus_1',
    { name: 'A', email: null, tags: ['y'], custom_fields: { cf_vip: null } },
    ctx,
    'partner',
    at,
  );
  assert.equal(e?.data, {
    customer_id: 'cus_1',
    restaurant_id: 'rest_a',
    at,
    changes: { email: null, tags: ['y'], custom_fields: {} },
    previous: { email: 'a@b.co', tags: ['x'], custom_fields: { cf_vip: { name: 'VIP', value: 'gold' } } },
  });
  assert.equal(decideUpdate(s, 'cus_1', { name: 'A', tags: ['x'] }, ctx, 'partner', at), []);
  assert.equal(decideUpdate(s, 'cus_1', { phone_number: null }, ctx, 'partner', at), []);
});

t('partners never reach another restaurant, a draft, a deleted or merged customer', () => {
  const s = created({ name: 'A' });
  assert.is(
    status(() => decideUpdate(s, 'cus_1', { name: 'B' }, { ...ctx, restaurantId: 'rest_b' }, 'partner', at)),
    404,
  );
  const draft = fold(
    decideCreate(initialCustomer, 'cus_2', { name: 'D' }, ctx, { draft: true, origin: 'CHANNEL' }, at),
  );
  assert.is(
    status(() => decideUpdate(draft, 'cus_2', { name: 'B' }, ctx, 'partner', at)),
    404,
  );
  assert.is(decideUpdate(draft, 'cus_2', { name: 'B' }, ctx, 'internal', at).length, 1);
  const deleted = fold(decideDelete(s, 'cus_1', null, at), s);
  // An erasure repeated (a retry, the CLI run twice) appends nothing and is no error; a missing one is 404.
  assert.equal(decideDelete(deleted, 'cus_1', 'again', at), []);
  assert.is(
    status(() => decideDelete(initialCustomer, 'cus_9', null, at)),
    404,
  );
  assert.is(
    status(() => decideUpdate(deleted, 'cus_1', { name: 'B' }, ctx, 'partner', at)),
    404,
  );
  assert.is(
    status(() => decideBlacklist(deleted, 'cus_1', null, at)),
    404,
  );
  assert.is(
    status(() => decideUpdate(initialCustomer, 'cus_9', { name: 'B' }, ctx, 'partner', at)),
    404,
  );
});

t('flags are idempotent: blacklisting or opting out twice appends once', () => {
  const s = created({ name: 'A' });
  const b = fold(decideBlacklist(s, 'cus_1', 'r', at), s);
  assert.equal(decideBlacklist(b, 'cus_1', 'r', at), []);
  const o = fold(decideAddOptOut(s, 'cus_1', 'WHATSAPP', null, at), s);
  const o2 = fold(decideAddOptOut(o, 'cus_1', 'EMAIL', null, at), o);
  assert.equal(o2.optOuts, ['EMAIL', 'WHATSAPP']);
  assert.equal(decideAddOptOut(o2, 'cus_1', 'EMAIL', null, at), []);
});

t(
  'an opt-out removed and a blacklist cleared are gone from the state; doing either again appends nothing',
  () => {
    const s = created({ name: 'A' });
    const both = fold(
      decideAddOptOut(s, 'cus_1', 'EMAIL', null, at),
      fold(decideAddOptOut(s, 'cus_1', 'WHATSAPP', null, at), s),
    );
    const [removed] = decideRemoveOptOut(both, 'cus_1', 'EMAIL', at);
    assert.is(removed?.type, 'MarketingOptOutRemoved');
    const after = fold([removed as NewEvent], both);
    assert.equal(after.optOuts, ['WHATSAPP']);
    assert.equal(decideRemoveOptOut(after, 'cus_1', 'EMAIL', at), []);
    // Added again after its removal: a new event (the state forgot it).
    assert.is(decideAddOptOut(after, 'cus_1', 'EMAIL', null, at).length, 1);
    const listed = fold(decideBlacklist(s, 'cus_1', 'r', at), s);
    assert.is(listed.blacklisted, true);
    assert.equal(decideClearBlacklist(s, 'cus_1', at), [], 'not blacklisted: nothing to clear');
    const cleared = fold(decideClearBlacklist(listed, 'cus_1', at), listed);
    assert.is(cleared.blacklisted, false);
    assert.equal(decideClearBlacklist(cleared, 'cus_1', at), []);
    assert.is(decideBlacklist(cleared, 'cus_1', 'again', at).length, 1);
  },
);

t(
  'merge: the survivor keeps its values, takes what it lacks, and never loses an opt-out or the blacklist',
  () => {
    const target = created({ name: 'T', email: 't@x.co', tags: ['a'], note: null }, 'cus_t');
    const source = fold([
      ...decideCreate(
        initialCustomer,
        'cus_s',
        {
          name: 'S',
          email: 's@x.co',
          phone_number: '0611111111',
          tags: ['a', 'b'],
          note: 'n',
          custom_fields: { cf_vip: 'gold' },
          newsletter_consent: true,
        },
        ctx,
        { draft: false, origin: 'API' },
        at,
      ),
    ]);
    const withFlags = fold(
      decideBlacklist(source, 'cus_s', null, at),
      fold(decideAddOptOut(source, 'cus_s', 'EMAIL', null, at), source),
    );
    assert.equal(mergedProfile(target.profile as CustomerProfile, withFlags.profile as CustomerProfile), {
      phone_number: '+33611111111',
      country_code: 'FR',
      note: 'n',
      tags: ['a', 'b'],
      custom_fields: { cf_vip: { name: 'VIP', value: 'gold' } },
    });
    assert.is(
      status(() => decideMergeInto(withFlags, 'cus_s', target, 'cus_s', at)),
      422,
    );
    assert.is(
      status(() => decideMergeInto(withFlags, 'cus_s', created({ name: 'O' }, 'cus_o'), 'cus_x', at)),
      0,
    );
    const otherRestaurant = fold(
      decideCreate(
        initialCustomer,
        'cus_o',
        { name: 'O' },
        { ...ctx, restaurantId: 'rest_b' },
        { draft: false, origin: 'API' },
        at,
      ),
    );
    assert.is(
      status(() => decideMergeInto(withFlags, 'cus_s', otherRestaurant, 'cus_o', at)),
      404,
    );
    const closed = fold(decideMergeInto(withFlags, 'cus_s', target, 'cus_t', at), withFlags);
    assert.is(closed.status, 'merged');
    assert.equal(decideMergeInto(closed, 'cus_s', target, 'cus_t', at), []);
    const [absorbed] = decideAbsorb(target, 'cus_t', closed, 'cus_s', at);
    const data = absorbed?.data as {
      marketing_opt_outs: string[];
      blacklisted: boolean;
      previous: Record<string, unknown>;
    };
    assert.equal(data.marketing_opt_outs, ['EMAIL']);
    assert.is(data.blacklisted, true);
    assert.equal(data.previous, {
      phone_number: null,
      country_code: null,
      note: null,
      tags: ['a'],
      custom_fields: {},
    });
    const after = fold(decideAbsorb(target, 'cus_t', closed, 'cus_s', at), target);
    assert.is(after.profile?.newsletter_consent, false);
    assert.is(after.profile?.email, 't@x.co');
    assert.equal(decideAbsorb(after, 'cus_t', closed, 'cus_s', at), []);
  },
);

t('merge: a custom field the survivor set keeps its value; tags stay within their bound of 100', () => {
  const profile = (over: Partial<CustomerProfile>): CustomerProfile =>
    ({ ...(created({ name: 'P' }).profile as CustomerProfile), ...over }) as CustomerProfile;
  const vip = (value: string) => ({ name: 'VIP', value });
  const target = profile({
    custom_fields: { cf_vip: vip('silver') },
    tags: Array.from({ length: 99 }, (_, i) => `t${i}`),
  });
  const source = profile({
    custom_fields: { cf_vip: vip('gold'), cf_other: { name: 'Other', value: 'x' } },
    tags: ['t0', 's1', 's2', 's3'],
  });
  const merged = mergedProfile(target, source);
  assert.equal(merged.custom_fields, { cf_vip: vip('silver'), cf_other: { name: 'Other', value: 'x' } });
  // 99 of its own, then the first of the source's it lacks: 100, the bound (bounds.ts).
  assert.is(merged.tags?.length, 100);
  assert.equal(merged.tags?.slice(97), ['t97', 't98', 's1']);
  // Nothing the survivor lacks: nothing changes.
  assert.equal(mergedProfile(target, profile({ custom_fields: { cf_vip: vip('gold') }, tags: ['t1'] })), {});
});

t(
  'merge: a survivor stored with repeated tags (before they were dropped) still takes the tags it lacks',
  () => {
    const profile = (tags: string[]): CustomerProfile =>
      ({ ...(created({ name: 'P' }).profile as CustomerProfile), tags }) as CustomerProfile;
    assert.equal(mergedProfile(profile(['vip', 'vip']), profile(['window'])), { tags: ['vip', 'window'] });
    // What it shows already holds the source's: nothing to change.
    assert.equal(mergedProfile(profile(['vip', 'vip']), profile(['vip'])), {});
  },
);

t(
  'webhook types: drafts are never announced; flagging one reads as a deletion, publishing as a creation',
  () => {
    assert.is(webhookTypeOf({ type: 'CustomerCreated', data: { draft: true } }), null);
    assert.is(webhookTypeOf({ type: 'CustomerCreated', data: { draft: false } }), 'customer.created');
    assert.is(webhookTypeOf({ type: 'CustomerDraftFlagged', data: {} }), 'customer.deleted');
    assert.is(webhookTypeOf({ type: 'CustomerDraftPublished', data: {} }), 'customer.created');
    assert.is(webhookTypeOf({ type: 'MarketingOptOutAdded', data: {} }), 'customer.updated');
    assert.is(webhookTypeOf({ type: 'CustomerMergedInto', data: {} }), null);
    assert.is(webhookTypeOf({ type: 'CustomerCursorKeyGenerated', data: {} }), null);
  },
);

t(
  'create with the profile prepareProfile already made (a CSV import) appends exactly what create without it does',
  () => {
    const inputs: (ProfileInput & { name: string })[] = [
      { name: 'Ada' },
      { name: 'Bo', phone_number: '06 12 34 56 78', email: 'bo@x.test', tags: ['a', 'a', 'b'], lang: 'EN' },
      {
        name: 'Cy',
        phone_number: '+44 20 7946 0958',
        custom_fields: { cf_vip: 'gold' },
        newsletter_consent: true,
      },
      { name: 'Di', external_id: 'crm-1', note: 'terrace' },
    ];
    for (const input of inputs) {
      const flags = { draft: false, origin: 'IMPORT' as const };
      assert.equal(
        decideCreate(initialCustomer, 'cus_9', input, ctx, flags, at, prepareProfile(input, ctx)),
        decideCreate(initialCustomer, 'cus_9', input, ctx, flags, at),
        input.name,
      );
    }
  },
);

t.run();
