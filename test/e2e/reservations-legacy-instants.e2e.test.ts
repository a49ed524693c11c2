// A log written before whole-minute offsets (commit 937b913) holds instants such as
// "1900-01-01T18:09:21+00:9.35" (Paris's local mean time, +00:09:21, written in fractional minutes).
// The log is append-only: the service must read such events, not refuse to start on them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { capacityStream } from '../../commands/availability/capacity-events';
import { type ReservationSnapshot, reservationStream } from '../../commands/reservations/events';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { FixedClock } from '../../src/core/clock';
import { NO_STREAM } from '../../src/ports/event-store';
import { NOW, reservationBootstrap, TOKENS } from '../helpers/reservations';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const t = suite<{ dir: string; rx: Receiver; svc: TestService }>('reservations: instants of older logs');

const ID = 'res_legacy_1900';
// 18:00Z and 19:30Z on 1 January 1900, as formatInstant wrote them before 937b913; then moved by 30 minutes.
const OLD = { start_at: '1900-01-01T18:09:21+00:9.35', end_at: '1900-01-01T19:39:21+00:9.35' };
const MOVED = { start_at: '1900-01-01T18:39:21+00:9.35', end_at: '1900-01-01T20:09:21+00:9.35' };
const AT = '2026-06-02T09:00:00.000Z';

const start = (dir: string) =>
  startTestService({
    dataDir: dir,
    bootstrap: reservationBootstrap(),
    clock: new FixedClock(NOW),
    env: {
      RATE_LIMIT_PER_MINUTE: '1000000',
      ROLES: 'api,projector,webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
  });

function snapshot(): ReservationSnapshot {
  return {
    reservation_id: ID,
    restaurant_id: 'rest_demo',
    external_id: 'legacy-1900',
    status: 'CONFIRMED',
    ...OLD,
    duration_minutes: 90,
    party_size: 2,
    service_date: '1900-01-01',
    shift_id: 'shift_dinner',
    room_id: 'room_main',
    table_ids: ['tbl_2a'],
    source: 'WEBSITE',
    customer_id: null,
    waiter_id: null,
    waiter_name: null,
    discount_id: null,
    prescriber_id: null,
    custom_message: null,
    allergies: null,
    metadata: {},
    tags: [],
    attached_files: [],
    send_client_notifications: true,
    send_payment_link: true,
    send_followup_email: false,
    is_table_definitive: false,
    is_force_inserted: true,
    total_amount_paid: 0,
    payments: [],
    feedback: null,
    cancellation_reason: null,
    locked_fields: [],
    seated_at: null,
    left_at: null,
    created_at: AT,
    updated_at: AT,
  };
}

/** What a forced create and a move in 1900 appended before the fix (the requests answered 500). */
async function writeLegacyEvents(file: string): Promise<void> {
  const log = SqliteEventStore.open(file);
  const metadata = { restaurant_id: 'rest_demo', actor: 'credential:key_full', request_id: 'req_legacy' };
  const seating = {
    restaurant_id: 'rest_demo',
    service_date: '1900-01-01',
    reservation_id: ID,
    shift_id: 'shift_dinner',
    room_id: 'room_main',
    table_ids: ['tbl_2a'],
    party_size: 2,
    external_id: 'legacy-1900',
    force_inserted: true,
    at: AT,
  };
  try {
    const capacity = capacityStream('rest_demo', '1900-01-01');
    await log.append(capacity, [{ type: 'SeatingHeld', data: { ...seating, ...OLD }, metadata }], NO_STREAM);
    await log.append(
      reservationStream(ID),
      [
        {
          type: 'ReservationCreated',
          data: { reservation_id: ID, restaurant_id: 'rest_demo', at: AT, reservation: snapshot() },
          metadata,
        },
      ],
      NO_STREAM,
    );
    await log.append(capacity, [{ type: 'SeatingHeld', data: { ...seating, ...MOVED }, metadata }], 0);
    await log.append(
      reservationStream(ID),
      [
        {
          type: 'ReservationUpdated',
          data: { reservation_id: ID, restaurant_id: 'rest_demo', at: AT, changes: MOVED, previous: OLD },
          metadata,
        },
      ],
      0,
    );
  } finally {
    await log.close();
  }
}

t.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-legacy-instants-'));
  ctx.rx = await startReceiver();
  const first = await start(ctx.dir);
  const endpoint = await first.api('POST', '/webhook-endpoints', {
    token: TOKENS.full,
    body: { url: ctx.rx.url('/hook'), enabled_events: ['reservation.created', 'reservation.canceled'] },
  });
  assert.is(endpoint.status, 201, endpoint.text);
  await first.close({ keepData: true });
  await writeLegacyEvents(join(ctx.dir, 'events.sqlite'));
  // Before the read side tolerated them, the service refused to start: "Invalid time value".
  ctx.svc = await start(ctx.dir);
});
t.after(async ({ dir, rx, svc }) => {
  await svc?.close();
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
});

const CANONICAL = { start_at: '1900-01-01T18:39:00+00:09', end_at: '1900-01-01T20:09:00+00:09' };

t('GET answers RFC 3339 instants naming the instants written', async ({ svc }) => {
  const res = await svc.api('GET', `/reservations/${ID}`, { token: TOKENS.full });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.data.start_at, CANONICAL.start_at);
  assert.is(res.body.data.end_at, CANONICAL.end_at);
  assert.is(Date.parse(res.body.data.start_at), Date.parse('1900-01-01T18:30:00Z'));
});

t('the list finds it in a start window', async ({ svc }) => {
  const res = await svc.api(
    'GET',
    `/reservations?start_at_from=${encodeURIComponent('1900-01-01T18:30:00Z')}&start_at_to=${encodeURIComponent('1900-01-01T18:30:00Z')}`,
    { token: TOKENS.full },
  );
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.data.map((r: { id: string }) => r.id),
    [ID],
  );
});

t('history shows the instants as RFC 3339, the move with its previous values', async ({ svc }) => {
  const res = await svc.api('GET', `/reservations/${ID}/history`, { token: TOKENS.full });
  assert.is(res.status, 200, res.text);
  const [created, moved] = res.body.data;
  const field = (item: { changes: { field: string }[] }, name: string) =>
    item.changes.find((c) => c.field === name);
  assert.equal(field(created, 'start_at'), { field: 'start_at', to: '1900-01-01T18:09:00+00:09' });
  assert.equal(field(moved, 'start_at'), {
    field: 'start_at',
    from: '1900-01-01T18:09:00+00:09',
    to: CANONICAL.start_at,
  });
});

const walkIn = (svc: TestService) =>
  svc.api('POST', '/reservations', {
    token: TOKENS.full,
    body: {
      party_size: 2,
      start_at: '1900-01-01T19:30:00+01:00',
      shift_id: 'shift_dinner',
      bypass_availability: true,
    },
  });

t('its seating holds its table: a walk-in forced at the same time gets the other one', async ({ svc }) => {
  const res = await walkIn(svc);
  assert.is(res.status, 201, res.text);
  assert.is(res.body.data.start_at, '1900-01-01T18:39:00+00:09');
  assert.equal(
    res.body.data.tables.map((x: { id: string }) => x.id),
    ['tbl_2b'],
  );
});

t('the webhook publisher sends it, and what follows it', async ({ svc, rx }) => {
  const cancel = await svc.api('POST', `/reservations/${ID}/cancel`, { token: TOKENS.full, body: {} });
  assert.is(cancel.status, 200, cancel.text);
  assert.is(cancel.body.data.start_at, CANONICAL.start_at);
  await rx.waitFor('/hook', 3);
  const ours = rx.for('/hook').filter((r) => r.json.data.object.id === ID);
  const created = ours.find((r) => r.json.type === 'reservation.created');
  const canceled = ours.find((r) => r.json.type === 'reservation.canceled');
  assert.is(created?.json.data.object.start_at, '1900-01-01T18:09:00+00:09');
  assert.is(canceled?.json.data.object.end_at, CANONICAL.end_at);
});

t('once canceled, its table is free again', async ({ svc }) => {
  const res = await walkIn(svc);
  assert.is(res.status, 201, res.text);
  assert.equal(
    res.body.data.tables.map((x: { id: string }) => x.id),
    ['tbl_2a'],
  );
});

t.run();
