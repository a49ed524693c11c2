import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  isSealed,
  type OwnerKey,
  openData,
  openMore,
  otherSubjects,
  personalFields,
  SealError,
  sealData,
  sealedCustomer,
  sealedKeySubject,
  sealedKid,
  sealFields,
  sealSplit,
  sealSubject,
} from '../../src/privacy/seal';

const test = suite('privacy: sealing personal fields');
const key = randomBytes(32);

const profile = fc.record({
  name: fc.string({ minLength: 1 }),
  email: fc.option(fc.emailAddress(), { nil: null }),
  phone_number: fc.option(fc.string(), { nil: null }),
  country_code: fc.constantFrom('FR', null),
  lang: fc.constantFrom('FR', 'EN'),
  tags: fc.array(fc.string()),
  note: fc.option(fc.string(), { nil: null }),
  custom_fields: fc.dictionary(fc.string(), fc.record({ name: fc.string(), value: fc.string() })),
  newsletter_consent: fc.boolean(),
  external_id: fc.option(fc.string(), { nil: null }),
});

test('seal then open gives the data back, for any profile; the sealed form holds none of it', () => {
  fc.assert(
    fc.property(profile, (p) => {
      const data = {
        customer_id: 'cus_1',
        restaurant_id: 'r',
        at: 't',
        profile: p,
        draft: false,
        origin: 'API',
      };
      const sealed = sealData('CustomerCreated', data, key);
      assert.ok(isSealed(sealed));
      // Every personal field of a profile (written out here, not read from seal.ts's list) is out of the
      // clear part; the others stay.
      // Nulls and empty lists or maps hold nothing personal and may stay.
      for (const field of ['name', 'email', 'phone_number', 'note', 'custom_fields', 'tags'] as const)
        if (p[field] !== null && Object.keys(p[field] as object).length > 0)
          assert.not.ok(field in (sealed.profile as object), `${field} is out of the clear part`);
      for (const field of ['country_code', 'lang', 'newsletter_consent', 'external_id'])
        assert.ok(field in (sealed.profile as object), `${field} stays in the clear part`);
      assert.equal(data.profile, p, 'the input is not changed');
      const opened = openData('CustomerCreated', JSON.parse(JSON.stringify(sealed)), key);
      const { profile: back, ...rest } = opened as typeof data;
      assert.equal(rest, { customer_id: 'cus_1', restaurant_id: 'r', at: 't', draft: false, origin: 'API' });
      assert.equal(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(p)), 'every field back');
    }),
    { numRuns: 200 },
  );
});

test('updates seal changes and previous values; reasons are sealed; other events are untouched', () => {
  const data = {
    customer_id: 'cus_1',
    restaurant_id: 'r',
    at: 't',
    changes: { email: 'new@x.test', tags: ['vip'] },
    previous: { email: 'old@x.test', tags: [] },
  };
  const sealed = sealData('CustomerUpdated', data, key);
  assert.not.match(JSON.stringify(sealed), /@x\.test/);
  assert.is((sealed.changes as { tags?: string[] }).tags, undefined, 'tags are sealed (typed about them)');
  assert.equal(openData('CustomerUpdated', sealed, key), data);
  // Each pattern holds a character base64 has not: the boxes' random text could hold a bare 'Ada'.
  const blacklisted = sealData('CustomerBlacklisted', { customer_id: 'cus_1', reason: 'rude to Ada' }, key);
  assert.not.match(JSON.stringify(blacklisted), /to Ada/);
  const optIn = { customer_id: 'cus_1', channel: 'EMAIL' };
  assert.is(sealData('MarketingOptOutRemoved', optIn, key), optIn);
  assert.is(sealSubject('ReservationPaymentRecorded', { customer_id: 'cus_1' }), null);
  assert.is(
    sealSubject('ReservationCreated', { reservation: { customer_id: 'cus_2' } }),
    'customer:cus_2',
    "a reservation's creation names its customer",
  );
  assert.is(sealSubject('ReservationUpdated', { reservation_id: 'res_1' }), null, 'the layer finds it');
  assert.is(sealSubject('CustomerCreated', { customer_id: 'cus_1' }), 'customer:cus_1');
});

test('every personal field of every sealed event type is out of the clear text (a hand-written table)', () => {
  // § is not a base64 character: a marker seen in the JSON is a value left in clear.
  const m = (n: number) => `§${n}§`;
  const cases: [string, Record<string, unknown>][] = [
    [
      'CustomerCreated',
      {
        customer_id: 'cus_1',
        profile: {
          name: m(1),
          email: m(2),
          phone_number: m(3),
          note: m(4),
          custom_fields: { cf: { name: 'x', value: m(5) } },
          tags: [m(6)],
        },
      },
    ],
    [
      'CustomerUpdated',
      {
        customer_id: 'cus_1',
        changes: { note: m(1), tags: [m(2)] },
        previous: { name: m(3), phone_number: m(4) },
      },
    ],
    [
      'CustomerMerged',
      {
        customer_id: 'cus_1',
        changes: { email: m(1), custom_fields: { cf: m(2) } },
        previous: { note: m(3) },
      },
    ],
    ['CustomerBlacklisted', { customer_id: 'cus_1', reason: m(1) }],
    ['CustomerDeleted', { customer_id: 'cus_1', reason: m(1) }],
    ['MarketingOptOutAdded', { customer_id: 'cus_1', channel: 'EMAIL', reason: m(1) }],
    [
      'ReservationCreated',
      {
        reservation: {
          customer_id: 'cus_1',
          allergies: m(1),
          custom_message: m(2),
          metadata: { k: m(3) },
          cancellation_reason: m(4),
        },
      },
    ],
    [
      'ReservationUpdated',
      {
        reservation_id: 'res_1',
        changes: { allergies: m(1), metadata: { k: m(2) } },
        previous: { custom_message: m(3), cancellation_reason: m(4) },
      },
    ],
    ['ReservationStatusChanged', { reservation_id: 'res_1', to: 'REJECTED', reason: m(1) }],
    [
      'ReservationFeedbackRecorded',
      { reservation_id: 'res_1', feedback: { rating: 4, comment: m(1), answer: m(2) } },
    ],
    ['WebhookDeliveriesScheduled', { customer_id: 'cus_1', payloads: { whd_1: m(1) } }],
    ['WebhookAttemptRecorded', { customer_id: 'cus_1', response_excerpt: m(1) }],
    ['MissedCallReported', { customer_id: 'cus_1', caller_phone_number: m(1) }],
    ['MessageRequested', { customer_id: 'cus_1', to: m(1), text: m(2), parameters: [m(3)] }],
    ['MessageSlotTaken', { customer_id: 'cus_1', caller: m(1) }],
    [
      'OutboxMessageRecorded',
      { customer_id: 'cus_1', to: m(1), text: m(2), template: { name: 't', parameters: [m(3)] } },
    ],
  ];
  for (const [type, data] of cases) {
    const sealed = sealData(type, data, key, 'cus_1');
    assert.ok(isSealed(sealed), type);
    assert.not.match(JSON.stringify(sealed), /§/, `${type}: a personal value is left in clear`);
    assert.equal(openData(type, JSON.parse(JSON.stringify(sealed)), key), data, `${type}: opens back`);
  }
});

test('without the key the fields read as erased, and the event says so', () => {
  const data = {
    customer_id: 'cus_1',
    profile: { name: 'Ada', email: 'a@x.test', custom_fields: { f: { name: 'n', value: 'v' } }, lang: 'EN' },
  };
  const sealed = sealData('CustomerCreated', data, key);
  assert.equal(openData('CustomerCreated', sealed, null), {
    customer_id: 'cus_1',
    profile: { lang: 'EN', name: '[erased]', email: null, custom_fields: {} },
    erased: true,
  });
  assert.equal(
    sealData('CustomerCreated', data, null),
    {
      customer_id: 'cus_1',
      profile: { lang: 'EN', name: '[erased]', email: null, custom_fields: {} },
      erased: true,
    },
    'an erased customer gets nothing personal written',
  );
});

test('a box opened with another key, moved to another customer or edited is refused', () => {
  const data = { customer_id: 'cus_1', profile: { name: 'Ada' } };
  const sealed = sealData('CustomerCreated', data, key) as Record<string, unknown> & {
    sealed: { box: string };
  };
  assert.throws(
    () => openData('CustomerCreated', sealed, randomBytes(32)),
    (e: unknown) => e instanceof SealError,
  );
  assert.throws(
    () => openData('CustomerCreated', { ...sealed, customer_id: 'cus_2' }, key),
    (e: unknown) => e instanceof SealError,
  );
  assert.throws(
    () => openData('CustomerUpdated', sealed, key),
    (e: unknown) => e instanceof SealError,
  );
  const box = Buffer.from(sealed.sealed.box, 'base64');
  box[box.length - 1]! ^= 1;
  assert.throws(
    () =>
      openData(
        'CustomerCreated',
        { ...sealed, sealed: { ...sealed.sealed, box: box.toString('base64') } },
        key,
      ),
    (e: unknown) => e instanceof SealError,
  );
});

test('reservation events: what the guest wrote is sealed with the customer named in the box', () => {
  const data = {
    reservation_id: 'res_1',
    restaurant_id: 'r',
    at: 't',
    changes: { allergies: 'peanuts (Ada)', custom_message: 'call +33612345678', party_size: 4 },
    previous: { allergies: null, custom_message: null, party_size: 2 },
  };
  const sealed = sealData('ReservationUpdated', data, key, 'cus_9');
  assert.not.match(JSON.stringify(sealed), /peanuts|33612345678/);
  assert.is((sealed.sealed as { customer_id: string }).customer_id, 'cus_9');
  assert.is(sealedCustomer(sealed), 'cus_9');
  assert.equal((sealed.changes as { party_size: number }).party_size, 4, 'the rest stays in clear');
  assert.equal(openData('ReservationUpdated', sealed, key), data);
  const erased = openData('ReservationUpdated', sealed, null);
  assert.equal(erased.changes, { allergies: null, custom_message: null, party_size: 4 });
  assert.is(erased.erased, true);
  // The customer is part of the associated data: a box moved to another customer does not open.
  const moved = { ...sealed, sealed: { ...(sealed.sealed as object), customer_id: 'cus_other' } };
  assert.throws(
    () => openData('ReservationUpdated', moved, key),
    (e: unknown) => e instanceof SealError,
  );
  const created = {
    reservation_id: 'res_1',
    reservation: {
      customer_id: 'cus_9',
      metadata: { crm: 'Ada L.' },
      cancellation_reason: null,
      tags: ['x'],
    },
  };
  const box = sealData('ReservationCreated', created, key, 'cus_9');
  assert.equal((box.reservation as { tags: string[] }).tags, ['x'], "a reservation's tags stay in clear");
  assert.not.match(JSON.stringify(box), /Ada L\./);
  assert.equal(openData('ReservationCreated', box, null).reservation, {
    customer_id: 'cus_9',
    metadata: {},
    cancellation_reason: null,
    tags: ['x'],
  });
  const feedback = sealData(
    'ReservationFeedbackRecorded',
    { feedback: { rating: 5, comment: 'Ada loved it', answer: null } },
    key,
    'cus_9',
  );
  assert.not.match(JSON.stringify(feedback), /Ada loved/);
  const fanout = sealData(
    'WebhookDeliveriesScheduled',
    { customer_id: 'cus_9', payloads: { v1: '{"name":"Ada"}' }, deliveries: [] },
    key,
  );
  assert.not.match(JSON.stringify(fanout), /"Ada|name/);
  assert.equal(openData('WebhookDeliveriesScheduled', fanout, null).payloads, {});
  const anonymous = { reservation_id: 'res_2', reservation: { customer_id: null, allergies: 'none' } };
  assert.is(
    sealData('ReservationCreated', anonymous, key, null),
    anonymous,
    'no customer: nothing to seal with',
  );
});

test('a v2 box names its pool key, which is part of the associated data; v1 boxes still open', () => {
  const data = { reservation_id: 'res_1', changes: { allergies: 'peanuts' }, previous: {} };
  const v2 = sealData('ReservationUpdated', data, key, 'cus_9', 'kid_A') as Record<string, unknown> & {
    sealed: { v: number; kid: string; customer_id: string };
  };
  assert.is(v2.sealed.v, 2);
  assert.is(v2.sealed.kid, 'kid_A');
  assert.is(v2.sealed.customer_id, 'cus_9');
  assert.is(sealedKid(v2), 'kid_A');
  assert.is(sealedKeySubject(v2), 'key:kid_A');
  assert.is(sealedCustomer(v2), 'cus_9');
  assert.equal(openData('ReservationUpdated', v2, key), data);
  assert.equal(openData('ReservationUpdated', v2, null).changes, { allergies: null });
  for (const moved of [
    { ...v2, sealed: { ...v2.sealed, kid: 'kid_B' } },
    { ...v2, sealed: { ...v2.sealed, customer_id: 'cus_1' } },
    { ...v2, sealed: { ...v2.sealed, v: 1 } },
  ])
    assert.throws(
      () => openData('ReservationUpdated', moved, key),
      (e: unknown) => e instanceof SealError,
    );
  assert.not.ok(isSealed({ sealed: { v: 2, paths: [], box: '' } }), 'a v2 box without its kid');
  const v1 = sealData('CustomerBlacklisted', { customer_id: 'cus_1', reason: 'x' }, key);
  assert.is(sealedKid(v1), null);
  assert.is(sealedKeySubject(v1), 'customer:cus_1');
  assert.equal(openData('CustomerBlacklisted', JSON.parse(JSON.stringify(v1)), key).reason, 'x');
});

test('the sealed copy keeps every other key where it was, own `__proto__` keys included; sealFields equals sealData', () => {
  const data = JSON.parse(
    '{"customer_id":"cus_1","__proto__":{"x":1},"at":"t","profile":{"lang":"EN","name":"Ada","tags":[],"email":"a@x.test","__proto__":{"y":2},"note":null}}',
  ) as Record<string, unknown>;
  const sealed = sealData('CustomerCreated', data, key) as Record<string, unknown> & { profile: object };
  assert.equal(Object.keys(sealed), ['customer_id', '__proto__', 'at', 'profile', 'sealed']);
  assert.equal(Object.keys(sealed.profile), ['lang', 'tags', '__proto__', 'note']);
  assert.is(
    Object.getPrototypeOf(sealed),
    Object.prototype,
    'an own __proto__ key never becomes the prototype',
  );
  assert.is(Object.getPrototypeOf(sealed.profile), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(JSON.parse(JSON.stringify(sealed)), '__proto__')?.value, {
    x: 1,
  });
  assert.equal(openData('CustomerCreated', JSON.parse(JSON.stringify(sealed)), key), data);
  // The layer's path: fields found once, the same box format, and the plaintext it keeps is the values'.
  const fields = personalFields('CustomerCreated', data);
  assert.equal(
    fields.map(([p]) => p),
    ['profile.name', 'profile.email'],
  );
  const box = sealFields('CustomerCreated', data, fields, key, 'cus_1', 'kid_1');
  assert.is(box.data.sealed && (box.data.sealed as { box: string }).box, box.box);
  assert.equal(JSON.parse(box.plaintext), ['Ada', 'a@x.test']);
  assert.equal(openData('CustomerCreated', JSON.parse(JSON.stringify(box.data)), key), data);
  assert.ok(data.profile && (data.profile as { name?: string }).name === 'Ada', 'the input is not changed');
});

test('any keys beside the personal fields (quotes, code, separators, __proto__) are copied as they are', () => {
  const hostile = [
    '"});process.exit(1);({"',
    "'",
    '\\',
    '\u0000',
    '\u2028',
    '__proto__',
    'constructor',
    'a\u0000b',
    '',
  ];
  fc.assert(
    fc.property(
      fc.dictionary(fc.oneof(fc.constantFrom(...hostile), fc.string()), fc.jsonValue(), { maxKeys: 30 }),
      fc.string({ minLength: 1 }),
      (extra, allergies) => {
        // Through JSON, as events arrive: an own `__proto__` key stays an own key.
        const reservation = JSON.parse(
          JSON.stringify({ ...extra, customer_id: 'cus_1', allergies }),
        ) as Record<string, unknown>;
        const data = { reservation_id: 'res_1', reservation };
        const sealed = JSON.parse(JSON.stringify(sealData('ReservationCreated', data, key)));
        const opened = openData('ReservationCreated', sealed, key) as typeof data;
        assert.equal(JSON.stringify(opened), JSON.stringify(data));
        assert.equal(Object.keys(opened.reservation).sort(), Object.keys(reservation).sort());
      },
    ),
    { numRuns: 300 },
  );
});

test("a second customer's box: opened with both keys, refused when moved to another owner or event", () => {
  const a = randomBytes(32);
  const b = randomBytes(32);
  const data = {
    reservation_id: 'res_1',
    changes: { customer_id: 'cus_b', allergies: 'B: sesame' },
    previous: { customer_id: 'cus_a', allergies: 'A: celery' },
  };
  const groups = otherSubjects('ReservationUpdated', data, 'cus_b');
  assert.equal(groups, [{ customers: ['cus_a'], paths: ['previous.allergies'], joint: false }]);
  const owners = new Map<string, OwnerKey>([['cus_a', { customer: 'cus_a', key: a, kid: 'p.1' }]]);
  const fields = personalFields('ReservationUpdated', data);
  const sealed = sealSplit(
    'ReservationUpdated',
    data,
    fields,
    { key: b, customer: 'cus_b' },
    groups,
    owners,
  ).data;
  assert.not.match(JSON.stringify(sealed), /sesame|celery/);
  const keys: Record<string, Buffer | null> = { 'key:p.1': a };
  const open = (stored: Record<string, unknown>, type = 'ReservationUpdated', own: Buffer | null = b) =>
    openMore(type, stored, openData(type, stored, own), own, (s) => keys[s] ?? null);
  const opened = open(sealed);
  assert.equal([opened.changes, opened.previous, opened.erased], [data.changes, data.previous, undefined]);
  // Only A's key destroyed: their text erased, B's kept; only B's: B's erased, A's kept (not joint).
  keys['key:p.1'] = null;
  const noA = open(sealed);
  assert.equal(
    [noA.changes, noA.previous, noA.erased],
    [data.changes, { customer_id: 'cus_a', allergies: null }, true],
  );
  keys['key:p.1'] = a;
  const noB = open(sealed, 'ReservationUpdated', null);
  assert.equal([noB.changes, noB.previous], [{ customer_id: 'cus_b', allergies: null }, data.previous]);
  // The box names its owners (associated data): given to another, it does not open.
  const more = (sealed.sealed as { more: { owners: { customer_id: string }[] }[] }).more;
  const moved = structuredClone(sealed) as typeof sealed;
  (moved.sealed as typeof sealed.sealed & { more: typeof more }).more[0]!.owners[0]!.customer_id = 'cus_c';
  assert.throws(
    () => open(moved),
    (e: unknown) => e instanceof SealError,
  );
});

test('every box gets its own IV, across refills of the IV pool', () => {
  const ivs = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const box = sealData('CustomerBlacklisted', { customer_id: 'cus_1', reason: 'x' }, key);
    ivs.add(
      Buffer.from((box.sealed as { box: string }).box, 'base64')
        .subarray(0, 12)
        .toString('hex'),
    );
  }
  assert.is(ivs.size, 2000);
});

test.run();
