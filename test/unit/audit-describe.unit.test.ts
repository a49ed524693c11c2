import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { auditorActor, partnerActor } from '../../src/audit/actors';
import {
  changesOf,
  changesWithoutContact,
  describeChanges,
  withoutContact,
  withoutSecrets,
} from '../../src/audit/changes';
import { historyEntry, historyText, instantBound, parseAsOf } from '../../src/audit/history';
import type { RecordedEvent } from '../../src/ports/event-store';

const test = suite('audit: actors and changes');

test('partners are told who acted relative to themselves, never another identity', () => {
  const mine = ['key_me', 'key_me_too'];
  assert.is(partnerActor('credential:key_me', mine), 'THIS_INTEGRATION');
  assert.is(partnerActor('credential:key_me_too', mine), 'THIS_INTEGRATION');
  assert.is(partnerActor('credential:key_else', mine), 'ANOTHER_INTEGRATION');
  assert.is(partnerActor('operator:cli', mine), 'RESTAURANT_STAFF');
  assert.is(partnerActor('manager:manager@demo.test', mine), 'RESTAURANT_STAFF');
  assert.is(partnerActor('system:scheduler', mine), 'AUTOMATIC');
  assert.is(partnerActor('system:customers', mine), 'AUTOMATIC');
  assert.is(partnerActor(undefined, mine), 'AUTOMATIC');
  assert.is(partnerActor('credential:', mine), 'ANOTHER_INTEGRATION');
  fc.assert(
    fc.property(fc.string(), (actor) => {
      const t = partnerActor(actor, mine);
      return t !== 'THIS_INTEGRATION' || mine.some((m) => actor === `credential:${m}`);
    }),
  );
});

test('auditors see every actor kind', () => {
  assert.equal(auditorActor('credential:key_1'), {
    kind: 'credential',
    id: 'key_1',
    raw: 'credential:key_1',
  });
  assert.equal(auditorActor('system:scheduler').kind, 'scheduler');
  assert.equal(auditorActor('operator:bootstrap'), {
    kind: 'operator',
    id: 'bootstrap',
    raw: 'operator:bootstrap',
  });
  assert.equal(auditorActor('user:m@x.test').kind, 'manager');
  assert.equal(auditorActor(42), { kind: 'unknown', id: null, raw: null });
  // An OAuth application at the token endpoint (grants, token issue and refresh).
  assert.equal(auditorActor('client:app_demo_pos'), {
    kind: 'application',
    id: 'app_demo_pos',
    raw: 'client:app_demo_pos',
  });
  assert.is(partnerActor('client:app_demo_pos', ['key_me']), 'ANOTHER_INTEGRATION', 'never which');
});

test('changes: updates with previous values, status changes, creations from their snapshot', () => {
  assert.equal(
    changesOf(
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'r1',
          restaurant_id: 'x',
          at: 't',
          changes: { party_size: 4, note: 'a' },
          previous: { party_size: 2 },
        },
      },
      'r1',
    ),
    [
      { field: 'party_size', from: 2, to: 4 },
      { field: 'note', to: 'a' },
    ],
  );
  assert.equal(
    changesOf(
      {
        type: 'ReservationStatusChanged',
        data: { reservation_id: 'r1', from: 'CONFIRMED', to: 'DONE', reason: null },
      },
      'r1',
    ),
    [
      { field: 'status', from: 'CONFIRMED', to: 'DONE' },
      { field: 'reason', to: null },
    ],
  );
  assert.equal(
    changesOf(
      {
        type: 'ReservationCreated',
        data: {
          reservation_id: 'r1',
          reservation: { reservation_id: 'r1', status: 'CONFIRMED', party_size: 2 },
        },
      },
      'r1',
    ),
    [
      { field: 'status', to: 'CONFIRMED' },
      { field: 'party_size', to: 2 },
    ],
  );
  assert.equal(
    describeChanges([
      { field: 'status', from: 'A', to: 'B' },
      { field: 'n', to: 1 },
    ]),
    ['status: A → B', 'n = 1'],
  );
});

test('a change whose values were erased since is still listed; only a change of customer restates', () => {
  // A partner's PATCH set custom_message (and metadata) from nothing; its customer was erased since:
  // the event reads both sides erased (null, {}). The change happened: it stays in the history.
  assert.equal(
    changesOf(
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'r1',
          restaurant_id: 'x',
          at: 't',
          changes: { party_size: 3, custom_message: null, metadata: {} },
          previous: { party_size: 2, custom_message: null, metadata: {} },
          erased: true,
        },
      },
      'r1',
    ),
    [
      { field: 'party_size', from: 2, to: 3 },
      { field: 'custom_message', from: null, to: null },
      { field: 'metadata', from: {}, to: {} },
      { field: 'erased', to: true },
    ],
  );
  // The guest text a reservation takes along to its new customer (restated as it was) is no change.
  assert.equal(
    changesOf(
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'r1',
          changes: { customer_id: 'c2', allergies: 'nuts' },
          previous: { customer_id: 'c1', allergies: 'nuts' },
        },
      },
      'r1',
    ),
    [{ field: 'customer_id', from: 'c1', to: 'c2' }],
  );
});

test('a change of customer that names what it restates leaves out only those fields', () => {
  // One PATCH moved the reservation to c2 and set custom_message from nothing; allergies were taken
  // along (restated). c2 was erased since: custom_message reads null on both sides, as allergies do.
  const moved = (data: Record<string, unknown>) =>
    changesOf(
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: 'r1',
          changes: { customer_id: 'c2', custom_message: null, allergies: null },
          previous: { customer_id: 'c1', custom_message: null, allergies: null },
          erased: true,
          ...data,
        },
      },
      'r1',
    );
  assert.equal(moved({ restated: ['allergies'] }), [
    { field: 'customer_id', from: 'c1', to: 'c2' },
    { field: 'custom_message', from: null, to: null },
    { field: 'erased', to: true },
  ]);
  // Nothing restated, said so: every field it holds was changed.
  assert.equal(moved({ restated: [] }), [
    { field: 'customer_id', from: 'c1', to: 'c2' },
    { field: 'custom_message', from: null, to: null },
    { field: 'allergies', from: null, to: null },
    { field: 'erased', to: true },
  ]);
  // Written before the events named them: every field equal on both sides reads as restated.
  assert.equal(moved({}), [
    { field: 'customer_id', from: 'c1', to: 'c2' },
    { field: 'erased', to: true },
  ]);
});

test('contact fields are removed at any depth without RESERVATIONS_READ_SENSITIVE', () => {
  const changes = [
    { field: 'email', from: 'a@x.test', to: 'b@x.test' },
    {
      field: 'customer',
      to: { name: 'Ada', email: 'a@x.test', phone_number: '+336', nested: [{ phone: '1' }] },
    },
    { field: 'profile.phone_number', to: '+33' },
    { field: 'party_size', from: 2, to: 3 },
  ];
  const safe = changesWithoutContact(changes);
  assert.equal(safe, [
    { field: 'customer', to: { name: 'Ada', nested: [{}] } },
    { field: 'party_size', from: 2, to: 3 },
  ]);
  assert.not.match(JSON.stringify(safe), /a@x|\+33/);
  assert.equal(withoutContact('plain'), 'plain');
});

test('--at reads a position or an RFC 3339 instant, nothing else', () => {
  assert.equal(parseAsOf('42'), { position: 42n });
  assert.equal(parseAsOf('2026-05-01T20:00:00+02:00'), { time: '2026-05-01T18:00:00.000Z' });
  assert.is(parseAsOf('2026-05-01'), null);
  assert.is(parseAsOf('-3'), null);
  assert.is(parseAsOf('yesterday'), null);
});

test('--at refuses instants that do not exist instead of rolling them over (Date.parse would)', () => {
  for (const text of [
    '2026-02-30T00:00:00Z',
    '2026-04-31T10:00:00+02:00',
    '2026-01-01T24:00:00Z',
    '2026-01-01T23:59:60Z',
    '2026-01-01T10:00:00+24:00',
  ])
    assert.is(parseAsOf(text), null, text);
  assert.equal(parseAsOf('2028-02-29T23:30:00-01:00'), { time: '2028-03-01T00:30:00.000Z' });
  assert.equal(parseAsOf('2026-05-01T20:00:00.123456Z'), { time: '2026-05-01T20:00:00.123Z' });
});

test("a customer's creation names them first, whatever order the opened event holds its fields in", () => {
  const opened = {
    type: 'CustomerCreated',
    data: {
      customer_id: 'c1',
      restaurant_id: 'x',
      at: 't',
      // As openData puts sealed fields back: after the fields that were never sealed.
      profile: {
        country_code: 'FR',
        lang: 'FR',
        tags: [],
        phone_number: '+33639980001',
        name: 'Léa Martin',
        email: 'l@example.com',
      },
      draft: false,
      origin: 'API',
    },
  };
  assert.equal(
    changesOf(opened, 'c1').map((c) => c.field),
    ['name', 'email', 'phone_number', 'country_code', 'lang', 'tags', 'draft', 'origin'],
  );
});

test("history says which restaurant an event is of: a credential's creation, a manager's access", () => {
  // The changes leave restaurant_id out (every event of a restaurant carries it): the entry says it.
  const access = {
    position: 9n,
    created: '2026-06-02T10:00:00.000Z',
    stream: 'user-usr_1',
    revision: 1,
    id: 'e2',
    type: 'UserRestaurantAccessSet',
    data: { user_id: 'usr_1', restaurant_id: 'rest_b', manage_integrations: true, at: 't' },
    metadata: { actor: 'operator:cli' },
    hash: undefined,
  } as unknown as RecordedEvent;
  const entry = historyEntry(access, 'usr_1');
  assert.is(entry.restaurant_id, 'rest_b');
  assert.equal(Object.keys(entry).slice(-2), ['restaurant_id', 'hash_ok'], 'new fields go at the end');
  assert.ok(historyText(entry)[0]!.includes('  at rest_b'), historyText(entry)[0]);
  const created = {
    ...access,
    stream: 'apikey-key_1',
    type: 'ApiKeyCreated',
    data: { key_id: 'key_1', restaurant_id: 'rest_c', name: 'POS', scopes: [], at: 't' },
    metadata: { actor: 'operator:cli', restaurant_id: 'rest_c' },
  } as unknown as RecordedEvent;
  assert.is(historyEntry(created, 'key_1').restaurant_id, 'rest_c');
  const none = { ...access, data: { user_id: 'usr_1', at: 't' } } as unknown as RecordedEvent;
  assert.is(historyEntry(none, 'usr_1').restaurant_id, null);
  assert.not.ok(historyText(historyEntry(none, 'usr_1'))[0]!.includes('  at '));
});

test('the readable history is one line per change: what a partner wrote cannot print a line of its own', () => {
  // A customer's name with a line break, a message with an escape sequence, a bidi override: sent by
  // a partner, they would otherwise print what reads as another change or another event.
  const forged = 'Ada\n2026-06-02T10:00:00.000Z  #99  reservation-r1@5  ReservationUpdated  by operator:cli';
  const event = {
    position: 7n,
    created: '2026-06-02T10:00:00.000Z',
    stream: 'reservation-r1',
    revision: 1,
    id: 'e1',
    type: 'ReservationUpdated',
    data: {
      reservation_id: 'r1',
      restaurant_id: 'x',
      at: 't',
      changes: {
        custom_message: forged,
        allergies: 'nuts\r    status: CONFIRMED → CANCELED',
        note: 'a\u001b[2Jb\u202ec',
      },
      previous: { custom_message: null },
    },
    metadata: { actor: 'credential:key_1\nforged', request_id: 'req_1' },
    hash: undefined,
  } as unknown as RecordedEvent;
  const lines = historyText(historyEntry(event, 'r1'));
  assert.is(lines.length, 4, lines.join('\n'));
  for (const l of lines) assert.not.match(l, /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u, l);
  assert.ok(lines[0]!.includes('credential:key_1\\u000aforged'), lines[0]);
  assert.ok(lines[1]!.includes('custom_message: null → Ada\\u000a2026'), lines[1]);
  assert.ok(lines[3]!.includes('note = a\\u001b[2Jb\\u202ec'), lines[3]);
  // Values without such characters read as before.
  assert.equal(describeChanges([{ field: 'party_size', from: 2, to: 3 }]), ['party_size: 2 → 3']);
});

test('instants bound recorded times (UTC, milliseconds, compared as text) exactly at both ends', () => {
  // Recorded at 10:00:00.000: at or before 10:00:00.0004, not at or after it.
  assert.is(instantBound('2026-06-02T12:00:00.0004+02:00', 'at or before'), '2026-06-02T10:00:00.000Z');
  assert.is(instantBound('2026-06-02T12:00:00.0004+02:00', 'at or after'), '2026-06-02T10:00:00.001Z');
  assert.is(instantBound('2026-06-02T10:00:00.001Z', 'at or after'), '2026-06-02T10:00:00.001Z');
  assert.is(instantBound('2026-06-02T10:00:00Z', 'at or after'), '2026-06-02T10:00:00.000Z');
  // An offset can move the last (first) day of year 9999 (0) past it: still after (before) every
  // recorded time, not the text "+010000-…" ("-000001-…") that compares before (after) them.
  for (const side of ['at or before', 'at or after'] as const) {
    assert.is(instantBound('9999-12-31T23:59:59-01:00', side), '9999-12-31T23:59:59.999Z', side);
    assert.is(instantBound('0000-01-01T00:00:00+01:00', side), '0000-01-01T00:00:00.000Z', side);
  }
  assert.equal(parseAsOf('9999-12-31T23:30:00-02:00'), { time: '9999-12-31T23:59:59.999Z' });
  assert.ok('2026-06-02T10:00:00.000Z' <= (instantBound('9999-12-31T23:59:59-01:00', 'at or before') ?? ''));
  assert.is(instantBound('2026-02-30T00:00:00Z', 'at or after'), null);
});

test("a manager's password hash never leaves the log through history or as-of: that it changed does", () => {
  const hash = 'scrypt$16384$8$1$c2FsdA$aGFzaA';
  const created = changesOf(
    { type: 'UserCreated', data: { user_id: 'u1', email: 'm@demo.test', password_hash: hash, at: 't' } },
    'u1',
  );
  assert.equal(created, [
    { field: 'email', to: 'm@demo.test' },
    { field: 'password_hash', to: '[redacted]' },
  ]);
  const changed = changesOf({
    type: 'UserPasswordChanged',
    data: { user_id: 'u1', password_hash: hash, at: 't' },
  });
  assert.equal(
    changed.find((c) => c.field === 'password_hash'),
    { field: 'password_hash', to: '[redacted]' },
  );
  assert.not.match(describeChanges(changed).join('\n'), hash);
  // Nested (a folded state, a snapshot): redacted at any depth; null stays null.
  assert.equal(
    withoutSecrets({ user: { password_hash: hash, email: 'm' }, list: [{ password_hash: null }] }),
    {
      user: { password_hash: '[redacted]', email: 'm' },
      list: [{ password_hash: null }],
    },
  );
  assert.equal(withoutSecrets({ party_size: 2 }), { party_size: 2 });
});

test('the hashes of API keys, client secrets and authorization codes never leave the log through history', () => {
  const hash = 'd'.repeat(64);
  const key = changesOf(
    {
      type: 'ApiKeyCreated',
      data: { key_id: 'k1', restaurant_id: 'r', name: 'POS', token_hash: hash, token_hint: 'abcd', at: 't' },
    },
    'k1',
  );
  const rotated = changesOf({
    type: 'OAuthApplicationSecretRotated',
    data: { client_id: 'c', secret_hash: hash, at: 't' },
  });
  const redeemed = changesOf({ type: 'OAuthCodeRedeemed', data: { code_hash: hash, key_id: 'k1', at: 't' } });
  for (const changes of [key, rotated, redeemed]) {
    assert.not.match(JSON.stringify(changes), hash);
    assert.ok(
      changes.some((c) => c.to === '[redacted]'),
      JSON.stringify(changes),
    );
  }
  assert.equal(withoutSecrets({ key: { token_hash: hash, name: 'POS' } }), {
    key: { token_hash: '[redacted]', name: 'POS' },
  });
});

test("webhook endpoints' sealed signing secrets never leave the log through history or as-of", () => {
  const box = 'v1.c2VhbGVkLXNpZ25pbmctc2VjcmV0';
  const created = changesOf(
    {
      type: 'WebhookEndpointCreated',
      data: { endpoint_id: 'we1', restaurant_id: 'r', url: 'https://h.test/', secret: box, at: 't' },
    },
    'we1',
  );
  const rotated = changesOf({
    type: 'WebhookEndpointSecretRotated',
    data: { endpoint_id: 'we1', restaurant_id: 'r', secret: box, previous_secret: box, at: 't' },
  });
  for (const changes of [created, rotated]) {
    assert.not.match(JSON.stringify(changes), box);
    assert.ok(
      changes.some((c) => c.to === '[redacted]'),
      JSON.stringify(changes),
    );
  }
  assert.equal(withoutSecrets({ endpoint: { secret: box, previous_secret: box, url: 'u' } }), {
    endpoint: { secret: '[redacted]', previous_secret: '[redacted]', url: 'u' },
  });
});

test.run();
