// POST /customers: the matching matrix (every spelling of each kind of number, email case, match
// order) and the on_match matrix with its HTTP codes and `result`.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerStream } from '../../commands/customers/events';
import { blacklistCustomer, deleteCustomer, flagCustomerDraft } from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { upsertCustomer } from '../../commands/customers/upsert';
import { operatorMeta } from '../../src/core/command-meta';
import { startCustomerService, streamLength, TOKENS } from '../helpers/customer-service';
import { withHook } from '../helpers/hooked-events';
import { OpenApiChecker } from '../helpers/openapi';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService; openapi: OpenApiChecker }>('customers: matching');
let n = 0;
const uniqueName = () => `Guest ${++n}`;

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({ TEST_CLOCK: 'true' });
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const post = (svc: TestService, body: unknown, token: string = TOKENS.write) =>
  svc.api('POST', '/customers', { token, body });

/** Every spelling of one number must land on the customer the first spelling created. */
const SPELLINGS: [string, string[], string][] = [
  [
    'French mobile',
    [
      '0612345678',
      '06 12 34 56 78',
      '06.12.34.56.78',
      '+33612345678',
      '+33 6 12 34 56 78',
      '0033 6 12 34 56 78',
      '0033612345678',
      '+33 (0)6 12 34 56 78',
    ],
    '+33612345678',
  ],
  [
    'French landline',
    ['01 42 68 53 00', '+33 1 42 68 53 00', '0033142685300', '01.42.68.53.00'],
    '+33142685300',
  ],
  ['British number (foreign)', ['+44 20 7946 0958', '+442079460958', '0044 20 7946 0958'], '+442079460958'],
  [
    'French number with an extension',
    ['06 12 34 56 06 ext. 12', '+33 6 12 34 56 06 ext. 12', '0612345606ext.12', '+33612345606;ext=12'],
    '+33612345606;ext=12',
  ],
];

for (const [kind, spellings, stored] of SPELLINGS) {
  t(`${kind}: every spelling matches the same customer`, async ({ svc, openapi }) => {
    const first = await post(svc, { name: uniqueName(), phone_number: spellings[0] });
    assert.is(first.status, 201, first.text);
    openapi.check('POST', '/api/partner/v1/customers', first);
    assert.is(first.body.result, 'created');
    assert.is(first.body.data.phone_number, stored);
    for (const spelling of spellings) {
      const again = await post(svc, { name: 'Someone else', phone_number: spelling });
      assert.is(again.status, 200, `${spelling}: ${again.text}`);
      openapi.check('POST', '/api/partner/v1/customers', again);
      assert.is(again.body.result, 'matched', spelling);
      assert.is(again.body.data.id, first.body.data.id, spelling);
      assert.is(again.body.data.name, first.body.data.name);
    }
  });
}

t('a number that is not a possible phone number is refused, whatever its spelling', async ({ svc }) => {
  for (const spelling of ['12345', '12 345', '12.345', 'hello world']) {
    const res = await post(svc, { name: uniqueName(), phone_number: spelling });
    assert.is(res.status, 400, `${spelling}: ${res.text}`);
    assert.equal(
      res.body.error.details.issues.map((i: { path: string }) => i.path),
      ['phone_number'],
    );
  }
});

t(
  'a national spelling is read with the restaurant country, so it is another number elsewhere',
  async ({ svc }) => {
    const fr = await post(svc, { name: uniqueName(), phone_number: '+33 6 98 76 54 32' });
    assert.is(fr.status, 201);
    // At the Italian restaurant "06 98 76 54 32" is a Rome number: no match with the French mobile.
    const it1 = await post(svc, { name: uniqueName(), phone_number: '+33 6 98 76 54 32' }, TOKENS.other);
    assert.is(it1.status, 201);
    const it2 = await post(svc, { name: uniqueName(), phone_number: '06 98 76 54 32' }, TOKENS.other);
    assert.is(it2.status, 201);
    assert.is(it2.body.data.phone_number, '+390698765432');
    assert.is(it2.body.data.country_code, 'IT');
    // And a British national spelling at the French restaurant is not the British number: it is no
    // possible French number either, so it is refused rather than stored as typed.
    const uk = await post(svc, { name: uniqueName(), phone_number: '+44 7700 900123' });
    assert.is(uk.status, 201);
    const ukNational = await post(svc, { name: uniqueName(), phone_number: '07700 900123' });
    assert.is(ukNational.status, 400, ukNational.text);
  },
);

t('emails match case-insensitively and keep their spelling', async ({ svc }) => {
  const first = await post(svc, { name: uniqueName(), email: 'Mixed.Case@Example.COM' });
  assert.is(first.status, 201);
  assert.is(first.body.data.email, 'Mixed.Case@Example.COM');
  for (const email of ['mixed.case@example.com', 'MIXED.CASE@EXAMPLE.COM', 'Mixed.Case@example.com']) {
    const again = await post(svc, { name: uniqueName(), email });
    assert.is(again.status, 200, email);
    assert.is(again.body.data.id, first.body.data.id);
  }
});

t('match order: external_id, then phone, then email', async ({ svc }) => {
  const byExternal = await post(svc, { name: 'X', external_id: 'crm-order-1' });
  const byPhone = await post(svc, { name: 'P', phone_number: '+33 7 11 22 33 44' });
  const byEmail = await post(svc, { name: 'E', email: 'order@example.com' });
  const all = {
    name: 'Q',
    external_id: 'crm-order-1',
    phone_number: '07 11 22 33 44',
    email: 'ORDER@example.com',
  };
  assert.is((await post(svc, all)).body.data.id, byExternal.body.data.id);
  const { external_id: _x, ...noExternal } = all;
  assert.is((await post(svc, noExternal)).body.data.id, byPhone.body.data.id);
  assert.is((await post(svc, { name: 'Q', email: 'order@EXAMPLE.com' })).body.data.id, byEmail.body.data.id);
  // A key that matches nothing does not stop the next one from matching.
  const fallThrough = await post(svc, { name: 'Q', external_id: 'crm-unknown', email: 'order@example.com' });
  assert.is(fallThrough.body.data.id, byEmail.body.data.id);
});

t(
  'on_match return_existing (default or explicit): 200 matched, nothing written, external_id untouched',
  async ({ svc }) => {
    const created = await post(svc, { name: 'Ret', phone_number: '+33 6 00 00 00 01', tags: ['a'] });
    const id = created.body.data.id;
    const events = await streamLength(svc, id);
    await svc.api('POST', '/__test/clock', { body: { advance_seconds: 60 } });
    for (const on_match of [undefined, 'return_existing']) {
      const res = await post(svc, {
        name: 'Changed',
        phone_number: '0600000001',
        external_id: 'crm-ret',
        tags: ['b'],
        ...(on_match ? { on_match } : {}),
      });
      assert.is(res.status, 200);
      assert.is(res.body.result, 'matched');
      assert.equal(res.body.data, created.body.data);
    }
    assert.is(await streamLength(svc, id), events);
    assert.is((await svc.api('GET', `/customers/${id}`, { token: TOKENS.read })).body.data.external_id, null);
  },
);

t(
  'on_match update: 200 updated, the given fields written (external_id too), updated_at moves',
  async ({ svc }) => {
    const created = await post(svc, { name: 'Upd', email: 'upd@example.com', note: 'keep me' });
    await svc.api('POST', '/__test/clock', { body: { advance_seconds: 60 } });
    const res = await post(svc, {
      name: 'Upd Renamed',
      email: 'UPD@example.com',
      external_id: 'crm-upd',
      newsletter_consent: true,
      on_match: 'update',
    });
    assert.is(res.status, 200);
    assert.is(res.body.result, 'updated');
    assert.is(res.body.data.id, created.body.data.id);
    assert.is(res.body.data.name, 'Upd Renamed');
    assert.is(res.body.data.email, 'UPD@example.com');
    assert.is(res.body.data.external_id, 'crm-upd');
    assert.is(res.body.data.newsletter_consent, true);
    assert.is(res.body.data.note, 'keep me');
    assert.ok(res.body.data.updated_at > created.body.data.updated_at);
    assert.is(res.body.data.created_at, created.body.data.created_at);
  },
);

t('on_match create_new: a new customer even when one matches (201 created)', async ({ svc }) => {
  const created = await post(svc, { name: 'Dup', external_id: 'crm-dup' });
  const again = await post(svc, { name: 'Dup', external_id: 'crm-dup', on_match: 'create_new' });
  assert.is(again.status, 201);
  assert.is(again.body.result, 'created');
  assert.is.not(again.body.data.id, created.body.data.id);
});

t('no match: 201 created whatever on_match says', async ({ svc }) => {
  for (const on_match of ['return_existing', 'update', 'create_new']) {
    const res = await post(svc, { name: uniqueName(), email: `nomatch-${on_match}@example.com`, on_match });
    assert.is(res.status, 201, on_match);
    assert.is(res.body.result, 'created');
  }
});

t('a blacklisted customer is returned like any other; a draft never matches', async ({ svc }) => {
  const black = await post(svc, { name: 'Black', phone_number: '+33 6 55 55 55 55' });
  await blacklistCustomer(svc.rt, black.body.data.id, 'no-shows', operatorMeta('test'));
  const matched = await post(svc, { name: 'Black', phone_number: '06 55 55 55 55' });
  assert.is(matched.status, 200);
  assert.is(matched.body.data.id, black.body.data.id);
  assert.is(matched.body.data.blacklisted, true);
  // create_new always creates (spec §4), but no unblacklisted twin that could then book by id: the
  // twin is created blacklisted, in the same append, and its own reservations are refused.
  const twinIds: string[] = [];
  for (const body of [
    { name: 'Black Twin', phone_number: '+33655555555', on_match: 'create_new' },
    { name: 'Black Twin', phone_number: '0655555555', email: 'twin@example.com', on_match: 'create_new' },
  ]) {
    const twin = await post(svc, body);
    assert.is(twin.status, 201, twin.text);
    assert.is(twin.body.result, 'created');
    assert.is.not(twin.body.data.id, black.body.data.id);
    assert.is(twin.body.data.blacklisted, true, 'the twin is blacklisted');
    twinIds.push(twin.body.data.id);
  }
  const twins = await svc.api('GET', '/customers?phone=%2B33655555555', { token: TOKENS.write });
  assert.equal(
    twins.body.data.map((c: { id: string }) => c.id).sort(),
    [black.body.data.id, ...twinIds].sort(),
  );
  assert.ok(
    twins.body.data.every((c: { blacklisted: boolean }) => c.blacklisted),
    'every customer with those details is blacklisted',
  );

  const draft = await post(svc, { name: 'Draft', phone_number: '+33 6 66 66 66 66' });
  const flagged = await flagCustomerDraft(svc.rt, draft.body.data.id, 'WHATSAPP', operatorMeta('test'));
  await svc.rt.settle(flagged.position);
  const fresh = await post(svc, { name: 'Draft', phone_number: '06 66 66 66 66' });
  assert.is(fresh.status, 201);
  assert.is.not(fresh.body.data.id, draft.body.data.id);
});

t(
  'a body refused without a match is refused with one: no 200 for bad input that matched',
  async ({ svc }) => {
    const first = await post(svc, {
      name: 'Checked',
      email: 'checked@example.com',
      phone_number: '+33 6 12 12 12 12',
    });
    assert.is(first.status, 201);
    const before = await streamLength(svc, first.body.data.id);
    for (const onMatch of ['return_existing', 'update'] as const) {
      // An unknown custom field and a value that does not fit: 422, one issue each (spec §2.4, §7).
      const fields = await post(svc, {
        name: 'Checked',
        email: 'CHECKED@example.com',
        custom_fields: { cf_unknown: 'x', cf_kids: 'three' },
        on_match: onMatch,
      });
      assert.is(fields.status, 422, `${onMatch}: ${fields.text}`);
      assert.equal(
        fields.body.error.details.issues.map((i: { path: string }) => i.path),
        ['custom_fields.cf_unknown', 'custom_fields.cf_kids'],
      );
      // Not a possible phone number (full-width digits): 400, and it never matches the stored number.
      for (const phone of ['＋３３６１２１２１２１２', 'call me maybe']) {
        const bad = await post(svc, {
          name: 'Checked',
          email: 'checked@example.com',
          phone_number: phone,
          on_match: onMatch,
        });
        assert.is(bad.status, 400, `${onMatch} ${phone}: ${bad.text}`);
        assert.is(bad.body.error.details.issues[0].path, 'phone_number');
      }
    }
    assert.is(await streamLength(svc, first.body.data.id), before, 'nothing written');
  },
);

t(
  'on_match update: a match deleted or merged away meanwhile is matched again, never a 404',
  async ({ svc }) => {
    const restaurant = { _id: 'rest_fr', country_code: 'FR', customer_matching: true };
    const meta = operatorMeta('test');
    // The matched customer is deleted just before the update lands: nothing else matches, so it creates.
    const gone = await post(svc, { name: 'Gone', email: 'gone@example.com' });
    const deleting = withHook(
      svc.rt,
      (stream) => stream === customerStream(gone.body.data.id),
      async () => void (await deleteCustomer(svc.rt, gone.body.data.id, null, meta)),
    );
    const created = await upsertCustomer(
      deleting,
      restaurant,
      { name: 'Back', email: 'gone@example.com' },
      'update',
      meta,
    );
    assert.is(created.result, 'created');
    assert.is.not(created.customerId, gone.body.data.id);
    // The match is merged into another customer, which takes its email: the survivor is updated.
    const dup = await post(svc, { name: 'Dup', email: 'dup@example.com' });
    const kept = await post(svc, { name: 'Kept', phone_number: '+33 6 13 13 13 13' });
    const merging = withHook(
      svc.rt,
      (stream) => stream === customerStream(dup.body.data.id),
      async () => void (await mergeCustomers(svc.rt, dup.body.data.id, kept.body.data.id, meta)),
    );
    // A merge closes the absorbed customer, then writes the survivor (its new email) at a later
    // position: matching again as of the first alone can miss the second (a catch-up's slice commits
    // part way, on a loaded machine) and create a duplicate. The match waits for the survivor's write.
    const asked: (bigint | null | undefined)[] = [];
    const settling = {
      ...merging,
      settle: (position: bigint | null | undefined) => {
        asked.push(position);
        return svc.rt.settle(position);
      },
    };
    const updated = await upsertCustomer(
      settling,
      restaurant,
      { name: 'Kept', email: 'dup@example.com', note: 'vip' },
      'update',
      meta,
    );
    assert.equal([updated.result, updated.customerId], ['updated', kept.body.data.id]);
    const survivorWrite = (await svc.rt.events.readStream(customerStream(kept.body.data.id))).find(
      (e) => e.type === 'CustomerMerged',
    )?.position as bigint;
    assert.ok(survivorWrite, 'the merge wrote the survivor');
    assert.ok(
      asked.some((p) => typeof p === 'bigint' && p >= survivorWrite),
      'matched again once the read models include the survivor as the merge left it',
    );
    await svc.rt.settle(updated.position);
    const survivor = await svc.api('GET', `/customers/${kept.body.data.id}`, { token: TOKENS.read });
    assert.equal([survivor.body.data.email, survivor.body.data.note], ['dup@example.com', 'vip']);
  },
);

t('matching never crosses restaurants', async ({ svc }) => {
  const fr = await post(svc, { name: 'Tenant', external_id: 'crm-tenant', email: 'tenant@example.com' });
  const it = await post(
    svc,
    { name: 'Tenant', external_id: 'crm-tenant', email: 'tenant@example.com' },
    TOKENS.other,
  );
  assert.is(it.status, 201);
  assert.is.not(it.body.data.id, fr.body.data.id);
});

t(
  'an external_id two customers hold (a PATCH gave it): POST matches the first created, the feed lists both',
  async ({ svc }) => {
    const first = await post(svc, { name: uniqueName(), external_id: 'shared-ext', on_match: 'create_new' });
    const second = await post(svc, { name: uniqueName(), on_match: 'create_new' });
    const patched = await svc.api('PATCH', `/customers/${second.body.data.id}`, {
      token: TOKENS.write,
      body: { external_id: 'shared-ext' },
    });
    assert.is(patched.status, 200);
    // The first one updated last: it is still the one matched, and the feed lists it last.
    await svc.api('PATCH', `/customers/${first.body.data.id}`, {
      token: TOKENS.write,
      body: { note: 'later' },
    });
    const matched = await post(svc, { name: uniqueName(), external_id: 'shared-ext' });
    assert.is(matched.status, 200);
    assert.is(matched.body.result, 'matched');
    assert.is(matched.body.data.id, first.body.data.id);
    const feed = await svc.api('GET', '/customers?external_id=shared-ext', { token: TOKENS.write });
    assert.equal(
      feed.body.data.map((c: { id: string }) => c.id),
      [second.body.data.id, first.body.data.id],
    );
  },
);

t.run();
