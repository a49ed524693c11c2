import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capacityStream } from '../../commands/availability/capacity-events';
import { blacklistCustomer } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import {
  create,
  DINNER,
  type ReservationService,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

const PATH = '/api/partner/v1/reservations';
const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('reservations: create');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const at = (hhmm: string, day = '2026-06-03') => `${day}T${hhmm}:00+02:00`;

t('201 answers the full reservation with the defaults of the spec', async ({ svc, openapi }) => {
  const res = await create(svc, {
    start_at: at('21:00'),
    external_id: 'create-defaults',
    custom_message: 'by the window',
    allergies: 'peanuts',
    metadata: { booking_tool: 'x' },
    tags: ['birthday'],
    attached_files: ['https://files.example/menu.pdf'],
    prescriber_id: 'pre_1',
    discount_id: 'disc_dinner',
    total_amount_paid: 1200,
  });
  assert.is(res.status, 201);
  openapi.check('POST', PATH, res);
  const r = res.body.data;
  assert.match(r.id, /^res_/);
  assert.is(r.status, 'CONFIRMED');
  assert.is(r.source, 'WEBSITE');
  assert.is(r.start_at, '2026-06-03T21:00:00+02:00');
  assert.is(r.end_at, '2026-06-03T22:30:00+02:00');
  assert.is(r.duration_minutes, 90);
  assert.equal(r.shift, { id: 'shift_dinner', name: 'Dinner', start_time: '19:00', end_time: '22:00' });
  assert.equal(r.tables, [{ id: 'tbl_2a', name: '2A', min_pax: 1, max_pax: 2 }]);
  assert.equal(r.room, { id: 'room_main', name: 'Main room' });
  assert.equal(r.prescriber, { id: 'pre_1', name: 'Hotel Concierge', phone_number: '+33612345678' });
  assert.equal(r.discount, { id: 'disc_dinner', value: 10, message: '-10% dinner' });
  assert.is(r.custom_message, 'by the window');
  assert.is(r.allergies, 'peanuts');
  assert.equal(r.metadata, { booking_tool: 'x' });
  assert.equal(r.tags, ['birthday']);
  assert.equal(r.attached_files, ['https://files.example/menu.pdf']);
  assert.is(r.total_amount_paid, 1200);
  assert.is(r.send_client_notifications, true);
  assert.is(r.send_payment_link, true);
  assert.is(r.is_force_inserted, false);
  assert.is(r.customer, null);
  assert.equal(r.payments, []);
  assert.is(r.payment_summary.currency, 'EUR');
  // Read your writes: the list sees it at once.
  const list = await svc.api('GET', '/reservations?external_id=create-defaults', { token: TOKENS.full });
  assert.is(list.body.pagination.total, 1);
  assert.equal(list.body.data[0], r);
});

t('the notification flags are recorded, never a dry run', async ({ svc }) => {
  const res = await create(svc, {
    start_at: at('21:15'),
    send_client_notifications: false,
    send_payment_link: false,
  });
  assert.is(res.status, 201);
  assert.is(res.body.data.send_client_notifications, false);
  assert.is(res.body.data.send_payment_link, false);
  const read = await svc.api('GET', `/reservations/${res.body.data.id}`, { token: TOKENS.full });
  assert.is(read.status, 200);
});

t('shift_id is derived from start_at, or checked when given', async ({ svc }) => {
  const lunch = await create(svc, { start_at: at('12:30'), bypass_approval: true });
  assert.is(lunch.status, 201);
  assert.is(lunch.body.data.shift.id, 'shift_lunch');
  const wrong = await create(svc, { start_at: at('12:30'), shift_id: 'shift_dinner' });
  assert.is(wrong.status, 422);
  assert.is(wrong.body.error.details.reason, 'OUTSIDE_SHIFT');
  // The message names the fix: a slot of GET /availability.
  assert.match(wrong.body.error.message, /take start_at and shift_id from a slot of GET \/availability/);
  const offGrid = await create(svc, { start_at: at('19:07') });
  assert.match(offGrid.body.error.message, /take start_at and shift_id from a slot of GET \/availability/);
  const unknown = await create(svc, { shift_id: 'shift_nope' });
  assert.is(unknown.body.error.details.reason, 'UNKNOWN_SHIFT');
});

t('422 with details.reason when the slot is not bookable', async ({ svc, openapi }) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ start_at: at('19:07') }, 'OUTSIDE_SHIFT'],
    [{ start_at: at('16:00') }, 'OUTSIDE_SHIFT'],
    [{ party_size: 12 }, 'PARTY_SIZE_OUT_OF_RANGE'],
    [{ start_at: '2026-06-01T19:00:00+02:00' }, 'TOO_LATE'],
    [{ table_ids: ['tbl_nope'] }, 'UNKNOWN_TABLE'],
    [{ room_id: 'room_nope' }, 'UNKNOWN_ROOM'],
    [{ party_size: 6, table_ids: ['tbl_2a'] }, 'NO_TABLE'],
    [{ discount_id: 'disc_nope' }, 'UNKNOWN_DISCOUNT'],
    [{ prescriber_id: 'pre_nope' }, 'UNKNOWN_PRESCRIBER'],
  ];
  for (const [body, reason] of cases) {
    const res = await create(svc, body);
    assert.is(res.status, 422, JSON.stringify(body));
    assert.is(res.body.error.code, 'VALIDATION_ERROR');
    assert.is(res.body.error.details.reason, reason, JSON.stringify(body));
    openapi.check('POST', PATH, res);
  }
});

t('chosen tables and room are honoured; max_covers caps the shift', async ({ svc }) => {
  const terrace = await create(svc, { start_at: at('19:30'), party_size: 5, table_ids: ['tbl_8'] });
  assert.is(terrace.status, 201);
  assert.equal(terrace.body.data.room, { id: 'room_terrace', name: 'Terrace' });
  const inRoom = await create(svc, { start_at: at('19:30'), party_size: 2, room_id: 'room_main' });
  assert.equal(inRoom.body.data.room.id, 'room_main');
});

t(
  'a shift requiring approval creates PENDING; bypass_approval needs RESERVATIONS_FORCE_CONFIRM',
  async ({ svc }) => {
    const pending = await create(svc, { start_at: at('12:00') });
    assert.is(pending.status, 201);
    assert.is(pending.body.data.status, 'PENDING');
    const refused = await create(svc, { start_at: at('12:00'), bypass_approval: true }, TOKENS.noCancel);
    assert.is(refused.status, 403);
    assert.is(refused.body.error.code, 'INSUFFICIENT_SCOPE');
    assert.equal(refused.body.error.details.missing_scopes, ['RESERVATIONS_FORCE_CONFIRM']);
    // As every INSUFFICIENT_SCOPE: what the request needs, and a message that names the fix.
    assert.equal(refused.body.error.details.required_scopes, [
      'RESERVATIONS_WRITE',
      'RESERVATIONS_FORCE_CONFIRM',
    ]);
    assert.equal(refused.body.error.details.options, ['bypass_approval']);
    assert.is(
      refused.body.error.message,
      'The option(s) bypass_approval need the scope(s) RESERVATIONS_FORCE_CONFIRM: ask the restaurant for an API key that holds them, or ask for them in the OAuth authorization (scope=)',
    );
  },
);

t(
  'a deposit rule adds a pending DEPOSIT payment row and PENDING_PAYMENT; bypass_payments needs FORCE_INSERT',
  async ({ svc }) => {
    const res = await create(svc, { start_at: at('10:30') });
    assert.is(res.status, 201);
    const r = res.body.data;
    assert.is(r.status, 'PENDING_PAYMENT');
    assert.is(r.payments.length, 1);
    assert.is(r.payments[0].payment_type, 'DEPOSIT');
    assert.is(r.payments[0].status, 'PENDING');
    assert.is(r.payments[0].amount, 2000);
    assert.is(r.payments[0].currency, 'EUR');
    assert.equal(r.payment_summary.statuses, ['PENDING']);
    assert.is(r.payment_summary.pending_amount, 2000);
    // send_payment_link false does not prevent the payment row.
    const noLink = await create(svc, { start_at: at('10:30'), send_payment_link: false });
    assert.is(noLink.body.data.payments.length, 1);
    const bypassed = await create(svc, { start_at: at('10:45'), bypass_payments: true });
    assert.is(bypassed.body.data.status, 'CONFIRMED');
    assert.equal(bypassed.body.data.payments, []);
    const refused = await create(svc, { start_at: at('10:45'), bypass_payments: true }, TOKENS.noCancel);
    assert.is(refused.status, 403);
    // Approval and a deposit (lunch, 6 guests): PENDING with the deposit row beside it.
    const both = await create(svc, { start_at: at('13:00'), party_size: 6 });
    assert.is(both.body.data.status, 'PENDING');
    assert.is(both.body.data.payments[0].amount, 9000);
  },
);

t(
  'initial_status and bypass_availability need RESERVATIONS_FORCE_INSERT; a forced reservation takes a full slot',
  async ({ svc }) => {
    // Guests are recorded as arrived from two hours before the start: not days before it (seated_at
    // would be "now", days before the seating). The clock reads 2026-06-02T10:00Z (12:00 local).
    const tooEarly = await create(svc, {
      start_at: at('20:00', '2026-06-04'),
      initial_status: 'SEATED',
      source: 'WALK_IN',
      bypass_availability: true,
    });
    assert.is(tooEarly.status, 422);
    assert.is(tooEarly.body.error.code, 'VALIDATION_ERROR');
    assert.is(tooEarly.body.error.details.reason, 'TOO_EARLY_TO_ARRIVE');
    assert.is(typeof tooEarly.body.error.request_id, 'string');
    const walkIn = await create(svc, {
      start_at: at('12:30', '2026-06-02'),
      initial_status: 'SEATED',
      source: 'WALK_IN',
      bypass_availability: true,
    });
    assert.is(walkIn.status, 201, JSON.stringify(walkIn.body));
    assert.is(walkIn.body.data.status, 'SEATED');
    assert.is(walkIn.body.data.source, 'WALK_IN');
    assert.is(walkIn.body.data.seated_at, '2026-06-02T10:00:00.000Z');
    const refused = await create(svc, { initial_status: 'CONFIRMED' }, TOKENS.noCancel);
    assert.is(refused.status, 403);
    assert.equal(refused.body.error.details.missing_scopes, ['RESERVATIONS_FORCE_INSERT']);
    // Sent as false, a flag asks for nothing and needs no scope.
    const plainFalse = await create(
      svc,
      { start_at: at('21:45'), bypass_availability: false },
      TOKENS.noCancel,
    );
    assert.is(plainFalse.status, 201);
    // Fill every table able to seat 7 (only tbl_8), then force one more.
    const day = '2026-06-05';
    assert.is((await create(svc, { start_at: at('20:00', day), party_size: 7 })).status, 201);
    const full = await create(svc, { start_at: at('20:00', day), party_size: 7 });
    assert.is(full.body.error.details.reason, 'NO_TABLE');
    const forced = await create(svc, {
      start_at: at('20:00', day),
      party_size: 7,
      bypass_availability: true,
    });
    assert.is(forced.status, 201);
    assert.is(forced.body.data.is_force_inserted, true);
    assert.equal(forced.body.data.tables, []);
    // Forced off the slot grid, with its shift.
    const offGrid = await create(svc, {
      start_at: at('20:07', day),
      shift_id: 'shift_dinner',
      bypass_availability: true,
    });
    assert.is(offGrid.status, 201);
    assert.is(offGrid.body.data.start_at, '2026-06-05T20:07:00+02:00');
  },
);

t(
  'a forced start shortly before a shift past midnight opens belongs to that night, beside its seatings',
  async ({ svc }) => {
    // The late shift runs 23:00 to 00:30 (60-minute seatings). A booking at 23:00 takes table 2A.
    const day = '2026-06-09';
    const late = await create(svc, { start_at: at('23:00', day), shift_id: 'shift_late' });
    assert.is(late.status, 201, late.text);
    assert.equal(
      late.body.data.tables.map((t: { id: string }) => t.id),
      ['tbl_2a'],
    );
    // A walk-in forced at 22:50 for the same shift is that night's: 2A is taken from 23:00, so it
    // gets 2B (it was put on the night before, whose seatings leave 2A free, and sat on 2A).
    const walkIn = await create(svc, {
      start_at: at('22:50', day),
      shift_id: 'shift_late',
      bypass_availability: true,
    });
    assert.is(walkIn.status, 201, walkIn.text);
    assert.equal(
      walkIn.body.data.tables.map((t: { id: string }) => t.id),
      ['tbl_2b'],
    );
    const held = await svc.rt.events.readStream(capacityStream('rest_demo', day));
    assert.ok(held.some((e) => e.data.reservation_id === walkIn.body.data.id));
    // After the shift's last start, still the night before: 00:45 on the 10th is the 9th's.
    const after = await create(svc, {
      start_at: at('00:45', '2026-06-10'),
      shift_id: 'shift_late',
      bypass_availability: true,
    });
    assert.is(after.status, 201, after.text);
    const night = await svc.rt.events.readStream(capacityStream('rest_demo', day));
    assert.ok(night.some((e) => e.data.reservation_id === after.body.data.id));
    // Before 1970 too (an instant before the epoch): 23:40 on 1 June 1960 is that night's.
    const sixties = await create(svc, {
      start_at: '1960-06-01T23:40:00+01:00',
      shift_id: 'shift_late',
      bypass_availability: true,
    });
    assert.is(sixties.status, 201, sixties.text);
    const then = await svc.rt.events.readStream(capacityStream('rest_demo', '1960-06-01'));
    assert.ok(then.some((e) => e.data.reservation_id === sixties.body.data.id));
  },
);

t(
  'a forced reservation before 1911 in Paris (local mean time, +00:09:21) is made and read',
  async ({ svc }) => {
    const old = await create(svc, {
      start_at: '1900-01-01T19:00:00+01:00',
      shift_id: 'shift_dinner',
      bypass_availability: true,
    });
    assert.is(old.status, 201, old.text);
    assert.is(old.body.data.start_at, '1900-01-01T18:09:00+00:09');
    assert.is(Date.parse(old.body.data.start_at), Date.parse('1900-01-01T19:00:00+01:00'));
    const read = await svc.api('GET', `/reservations/${old.body.data.id}`, { token: TOKENS.full });
    assert.is(read.status, 200, read.text);
    assert.is(read.body.data.end_at, '1900-01-01T19:39:00+00:09');
  },
);

t(
  'external_id is unique within the restaurant: 409, the original is not replayed',
  async ({ svc, openapi }) => {
    const first = await create(svc, { start_at: at('20:15'), external_id: 'dup-1' });
    assert.is(first.status, 201);
    const again = await create(svc, { start_at: at('20:30'), external_id: 'dup-1' });
    assert.is(again.status, 409);
    assert.is(again.body.error.code, 'RESOURCE_CONFLICT');
    openapi.check('POST', PATH, again);
    // Another restaurant may use the same external_id.
    const other = await create(svc, { external_id: 'dup-1' }, TOKENS.other);
    assert.is(other.status, 201);
    const list = await svc.api('GET', '/reservations?external_id=dup-1', { token: TOKENS.full });
    assert.is(list.body.pagination.total, 1);
  },
);

t(
  'the customer: null is anonymous, {id} links, inline finds or creates, and stats follow',
  async ({ svc }) => {
    const day = '2026-06-08';
    const anonymous = await create(svc, { start_at: at('19:45', day), customer: null });
    assert.is(anonymous.body.data.customer, null);
    const inline = await create(svc, {
      start_at: at('19:45', day),
      customer: {
        name: 'Ada Lovelace',
        phone_number: '06 11 22 33 44',
        email: 'ada@example.com',
        lang: 'EN',
      },
    });
    assert.is(inline.status, 201);
    const customer = inline.body.data.customer;
    assert.equal(
      {
        name: customer.name,
        email: customer.email,
        phone_number: customer.phone_number,
        lang: customer.lang,
      },
      { name: 'Ada Lovelace', email: 'ada@example.com', phone_number: '+33611223344', lang: 'EN' },
    );
    // The same phone, spelled otherwise, finds the same customer.
    const matched = await create(svc, {
      start_at: at('20:45', day),
      customer: { name: 'Ada L.', phone_number: '+33 6 11 22 33 44' },
    });
    assert.is(matched.body.data.customer.id, customer.id);
    assert.is(matched.body.data.customer.name, 'Ada Lovelace');
    const linked = await create(svc, { start_at: at('20:00', '2026-06-06'), customer: { id: customer.id } });
    assert.is(linked.body.data.customer.id, customer.id);
    const stats = await svc.api('GET', `/customers/${customer.id}`, { token: TOKENS.full });
    assert.is(stats.body.data.stats.reservation_count, 3);
    assert.is(stats.body.data.stats.last_reservation_date, '2026-06-08');
    const unknown = await create(svc, { customer: { id: 'cus_nope' } });
    assert.is(unknown.status, 422);
    assert.is(unknown.body.error.details.reason, 'CUSTOMER_NOT_FOUND');
    const otherRestaurants = await create(svc, { customer: { id: customer.id } }, TOKENS.other);
    assert.is(otherRestaurants.body.error.details.reason, 'CUSTOMER_NOT_FOUND');
    // {id} with other fields is ambiguous: 400.
    const ambiguous = await create(
      svc,
      { customer: { id: customer.id, name: 'x' } },
      TOKENS.full,
      undefined,
      true,
    );
    assert.is(ambiguous.status, 400);
    const nameless = await create(
      svc,
      { customer: { email: 'x@example.com' } },
      TOKENS.full,
      undefined,
      true,
    );
    assert.is(nameless.status, 400);
  },
);

t(
  'inline details take an empty email or phone as "not given": it never clears a contact (spec §4)',
  async ({ svc }) => {
    const day = '2026-06-11';
    const made = await create(svc, {
      start_at: at('19:00', day),
      customer: { name: 'Blank Fields', phone_number: '06 44 55 66 77', email: 'blank@example.com' },
    });
    assert.is(made.status, 201);
    const id = made.body.data.customer.id;
    // A booking form's blank email: matched on the phone and updated, the email kept.
    const update = await create(svc, {
      start_at: at('19:15', day),
      customer: { name: 'Blank Renamed', phone_number: '+33644556677', email: '', on_match: 'update' },
    });
    assert.is(update.status, 201);
    assert.is(update.body.data.customer.id, id);
    // A blank phone: matched on the email, the phone kept.
    const byEmail = await create(svc, {
      start_at: at('19:30', day),
      customer: { name: 'Blank Again', phone_number: '', email: 'blank@example.com', on_match: 'update' },
    });
    assert.is(byEmail.status, 201);
    assert.is(byEmail.body.data.customer.id, id);
    const after = (await svc.api('GET', `/customers/${id}`, { token: TOKENS.full })).body.data;
    assert.is(after.name, 'Blank Again');
    assert.is(after.email, 'blank@example.com');
    assert.is(after.phone_number, '+33644556677');
    // Both blank: a new customer without contact details.
    const fresh = await create(svc, {
      start_at: at('21:00', day),
      customer: { name: 'No Contact', phone_number: '', email: '' },
    });
    assert.is(fresh.status, 201);
    assert.is.not(fresh.body.data.customer.id, id);
    assert.is(fresh.body.data.customer.email, null);
    assert.is(fresh.body.data.customer.phone_number, null);
    // A malformed one is still refused, at its own path.
    const bad = await create(
      svc,
      { start_at: at('20:00', day), customer: { name: 'Bad', email: 'not-an-email' } },
      TOKENS.full,
      undefined,
      true,
    );
    assert.is(bad.status, 400);
    assert.is(bad.body.error.details.issues[0].path, 'customer.email');
  },
);

t(
  'a blacklisted customer (by id or matched inline) is rejected and nothing about them is written',
  async ({ svc }) => {
    const made = await create(svc, {
      start_at: at('21:30', '2026-06-09'),
      customer: { name: 'Banned Guest', phone_number: '+33699999999', email: 'banned@example.com' },
    });
    const id = made.body.data.customer.id;
    await svc.rt.settle((await blacklistCustomer(svc.rt, id, 'fraud', operatorMeta('test'))).position);
    const before = await svc.api('GET', `/customers/${id}`, { token: TOKENS.full });
    const byId = await create(svc, { start_at: at('21:30', '2026-06-07'), customer: { id } });
    assert.is(byId.status, 422);
    assert.is(byId.body.error.details.reason, 'CUSTOMER_BLACKLISTED');
    const inline = await create(svc, {
      start_at: at('21:30', '2026-06-07'),
      customer: {
        name: 'Someone Else',
        email: 'BANNED@example.com',
        on_match: 'update',
        newsletter_consent: true,
      },
    });
    assert.is(inline.status, 422);
    assert.is(inline.body.error.details.reason, 'CUSTOMER_BLACKLISTED');
    // create_new does not make a fresh, unblacklisted twin of the guest the details would match.
    const customersBefore = await svc.api('GET', '/customers?limit=100', { token: TOKENS.full });
    for (const customer of [
      { name: 'Someone Else', email: 'Banned@Example.com', on_match: 'create_new' },
      { name: 'Someone Else', phone_number: '06 99 99 99 99', on_match: 'create_new' },
    ]) {
      const twin = await create(svc, { start_at: at('21:30', '2026-06-07'), customer });
      assert.is(twin.status, 422, JSON.stringify(customer));
      assert.is(twin.body.error.details.reason, 'CUSTOMER_BLACKLISTED');
    }
    const customersAfter = await svc.api('GET', '/customers?limit=100', { token: TOKENS.full });
    assert.equal(customersAfter.body.data, customersBefore.body.data);
    const after = await svc.api('GET', `/customers/${id}`, { token: TOKENS.full });
    assert.equal(after.body.data, before.body.data);
    // Refused by the checks, before any seating was held: the day's capacity stream was never written.
    assert.equal(await svc.rt.events.readStream('capacity-rest_demo-2026-06-07'), []);
    const day = await svc.api(
      'GET',
      '/reservations?start_at_from=2026-06-07T00:00:00%2B02:00&start_at_to=2026-06-07T23:59:59%2B02:00',
      { token: TOKENS.full },
    );
    assert.is(day.body.pagination.total, 0);
  },
);

t(
  'a refused reservation creates no customer (slot refused after the inline details were valid)',
  async ({ svc }) => {
    const count = async () =>
      (await svc.api('GET', '/customers?email=nobody-new@example.com', { token: TOKENS.full })).body.data
        .length;
    const res = await create(svc, {
      start_at: at('16:00'),
      customer: { name: 'Nobody New', email: 'nobody-new@example.com' },
    });
    assert.is(res.status, 422);
    assert.is(await count(), 0);
    // Refused for a duplicate external_id: the customer, resolved only after every check, is not written.
    assert.is((await create(svc, { start_at: at('20:00', '2026-06-10'), external_id: 'taken' })).status, 201);
    const late = await create(svc, {
      start_at: at('20:00', '2026-06-10'),
      external_id: 'taken',
      customer: { name: 'Nobody New', email: 'nobody-new@example.com' },
    });
    assert.is(late.status, 409);
    assert.is(await count(), 0);
  },
);

t('bad input is 400 with details.issues; unknown properties are refused', async ({ svc, openapi }) => {
  const unknown = await create(svc, { colour: 'red' }, TOKENS.full, undefined, true);
  assert.is(unknown.status, 400);
  assert.is(unknown.body.error.details.issues[0].path, 'colour');
  openapi.check('POST', PATH, unknown);
  const missing = await svc.api('POST', '/reservations', {
    token: TOKENS.full,
    body: { start_at: DINNER },
    invalid: true,
  });
  assert.is(missing.status, 400);
  assert.ok(missing.body.error.details.issues.some((i: { path: string }) => i.path === 'party_size'));
  const noOffset = await create(svc, { start_at: '2026-06-03T19:00:00' }, TOKENS.full, undefined, true);
  assert.is(noOffset.status, 400);
  const badSource = await create(svc, { source: 'CARRIER_PIGEON' }, TOKENS.full, undefined, true);
  assert.is(badSource.status, 400);
  const noBody = await svc.api('POST', '/reservations', { token: TOKENS.full });
  assert.is(noBody.status, 400);
  const readOnly = await create(svc, {}, TOKENS.readOnly);
  assert.is(readOnly.status, 403);
});

t.run();
