// seating_sync version 2 (projections/seating-sync-v2.ts) decides exactly as version 1 does: random
// histories of seatings, moves, claims and reservation events, each applied to both versions, give the
// same in_sync and out_of_sync_since after every event and the same days and claims for the repair.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXTERNAL_ID_CLAIM_PREFIX, externalIdClaimStream } from '../../commands/reservations/events';
import { SEATING_SYNC, type SeatingSyncDoc, seatingSyncProjection } from '../../projections/seating-sync';
import {
  inSyncV2,
  type SeatingSyncDocV2,
  seatingOfText,
  seatingSyncParts,
  seatingSyncProjectionV2,
  seatingText,
} from '../../projections/seating-sync-v2';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { RecordedEvent } from '../../src/ports/event-store';

const R = 'rest_1';
const ID = 'res_1';
const days = ['2026-06-03', '2026-06-04'];

const seating = fc.record({
  service_date: fc.constantFrom(...days),
  shift_id: fc.constantFrom('shift_dinner', 'shift_lunch'),
  room_id: fc.constantFrom('room_main', null),
  table_ids: fc.constantFrom(['t1'], ['t1', 't2'], ['t3']),
  start_at: fc.constantFrom('2026-06-03T19:00:00+02:00', '2026-06-03T21:00:00+02:00'),
  end_at: fc.constantFrom('2026-06-03T20:30:00+02:00'),
  party_size: fc.integer({ min: 1, max: 3 }),
});
const status = fc.constantFrom('CONFIRMED', 'SEATED', 'CANCELED_BY_CUSTOMER', 'NO_SHOW', 'FINISHED');
const moveId = fc.constantFrom('m1', 'm2');
const ext = fc.constantFrom('ext-1', 'ext-2');

type Step = { type: string; stream: string; data: Record<string, unknown> };
const step: fc.Arbitrary<Step> = fc.oneof(
  seating.map((s) => ({
    type: 'SeatingHeld',
    stream: 'cap',
    data: { ...s, reservation_id: ID, restaurant_id: R },
  })),
  fc.constantFrom(...days).map((d) => ({
    type: 'SeatingReleased',
    stream: 'cap',
    data: { service_date: d, reservation_id: ID, restaurant_id: R },
  })),
  fc.tuple(seating, moveId).map(([s, m]) => ({
    type: 'SeatingMoveHeld',
    stream: 'cap',
    data: { ...s, move_id: m, reservation_id: ID, restaurant_id: R },
  })),
  fc.tuple(seating, moveId).map(([s, m]) => ({
    type: 'SeatingMoveConfirmed',
    stream: 'cap',
    data: { ...s, move_id: m, reservation_id: ID, restaurant_id: R },
  })),
  fc.tuple(fc.constantFrom(...days), moveId).map(([d, m]) => ({
    type: 'SeatingMoveDropped',
    stream: 'cap',
    data: { service_date: d, move_id: m, reservation_id: ID, restaurant_id: R },
  })),
  fc.tuple(seating, status).map(([s, st]) => ({
    type: 'ReservationCreated',
    stream: 'res',
    data: { reservation_id: ID, restaurant_id: R, reservation: { ...s, status: st } },
  })),
  fc
    .tuple(
      fc.option(seating.map((s) => ({ party_size: s.party_size, table_ids: s.table_ids }))),
      fc.boolean(),
    )
    .map(([c, day]) => ({
      type: 'ReservationUpdated',
      stream: 'res',
      data: {
        reservation_id: ID,
        changes: { notes: 'x', ...(c ?? {}), ...(day ? { service_date: days[1] } : {}) },
      },
    })),
  status.map((to) => ({ type: 'ReservationStatusChanged', stream: 'res', data: { reservation_id: ID, to } })),
  fc.tuple(fc.constantFrom('Claimed', 'Released'), ext).map(([type, e]) => ({
    type,
    stream: externalIdClaimStream(R, e),
    data: { owner: ID },
  })),
  // A claim stream of another kind: ignored by both.
  fc.constant({ type: 'Claimed', stream: 'reservation-slot-x', data: { owner: ID } }),
);

test('version 2 decides as version 1 on any history', async () => {
  assert.ok(EXTERNAL_ID_CLAIM_PREFIX.length > 0);
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 14 }), async (steps) => {
      const one = new EmbeddedDocumentStore();
      const two = new EmbeddedDocumentStore();
      let n = 0;
      for (const s of steps) {
        n++;
        const at = `2026-06-01T10:00:${String(n).padStart(2, '0')}.000Z`;
        const event: RecordedEvent = {
          id: `e${n}`,
          type: s.type,
          data: { ...s.data, at },
          metadata: { restaurant_id: R } as RecordedEvent['metadata'],
          created: at,
          stream: s.stream,
          revision: n,
          position: BigInt(n),
        };
        await seatingSyncProjection.apply(event, one);
        await seatingSyncProjectionV2.apply(event, two);
        const a = await one.collection<SeatingSyncDoc>(SEATING_SYNC).findOne({ _id: ID });
        const b = await two.collection<SeatingSyncDocV2>(SEATING_SYNC).findOne({ _id: ID });
        assert.is(b === null, a === null);
        if (a === null || b === null) continue;
        const where = `after ${steps
          .slice(0, n)
          .map((x) => x.type)
          .join(', ')}`;
        assert.is(b.in_sync, a.in_sync, where);
        assert.is(b.out_of_sync_since, a.out_of_sync_since, where);
        assert.is(b._pos, a._pos);
        assert.is(b.restaurant_id, a.restaurant_id);
        const pa = seatingSyncParts(a);
        const pb = seatingSyncParts(b);
        assert.equal(pb.days.sort(), pa.days.sort(), where);
        assert.equal(pb.claims, pa.claims, where);
        assert.is(b.status ?? null, a.reservation?.status ?? null);
        if (a.reservation) {
          const { status: _s, ...seat } = a.reservation;
          assert.is(b.seat, seatingText(seat));
        } else assert.is(b.seat, null);
      }
    }),
    { numRuns: 400 },
  );
});

test('a seating as text: read back field for field, equal texts for equal seatings', () => {
  const s = {
    service_date: '2026-06-03',
    shift_id: 'shift_dinner',
    room_id: null,
    table_ids: ['t1', 't2'],
    start_at: '2026-06-03T19:00:00+02:00',
    end_at: '2026-06-03T20:30:00+02:00',
    party_size: 2,
  };
  assert.equal(seatingOfText(seatingText(s)), s);
  assert.is(seatingText({ ...s, at: 'then' } as typeof s), seatingText(s));
  assert.is.not(seatingText({ ...s, table_ids: ['t1'] }), seatingText(s));
  const seat = seatingText(s);
  assert.is(
    inSyncV2({ seat, status: 'CONFIRMED', holds: { '2026-06-03': seat }, claims: null, moves: null }),
    true,
  );
  assert.is(
    inSyncV2({ seat, status: 'CONFIRMED', holds: { '2026-06-03': seat }, claims: null, moves: { m1: seat } }),
    false,
  );
  assert.is(
    inSyncV2({ seat, status: 'CANCELED_BY_CUSTOMER', holds: null, claims: ['e'], moves: null }),
    true,
  );
  assert.is(inSyncV2({ seat: null, status: null, holds: null, claims: ['e'], moves: null }), false);
});

test.run();
