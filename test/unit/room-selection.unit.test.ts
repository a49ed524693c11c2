// Shifts that require room selection: the exact check and the write side's early refusal.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type AvailabilityInput, checkSlot } from '../../commands/availability/check';
import type { Shift } from '../../commands/catalog/types';
import { decideHold, type HoldRequest } from '../../commands/reservations/capacity-decide';
import { initialCapacity } from '../../commands/reservations/capacity-state';
import { catalogRefusal, type SeatingRequest } from '../../commands/reservations/hold';
import { BusinessRuleError } from '../../src/core/errors';
import { booking, room, shift, table } from '../helpers/catalog';

const PARIS = 'Europe/Paris';
const at = (local: string) => Date.parse(`${local}+02:00`);
const NOW = new Date('2026-05-01T08:00:00Z');
const rooms = [room('room_main'), room('room_terrace')];
const tables = [table('m1', 1, 2, 'room_main'), table('t1', 1, 4, 'room_terrace')];
const selecting = shift({ id: 'tasting', requires_room_selection: true });
const plain = shift({ id: 'plain' });

const input = (shifts: Shift[], bookings = [] as ReturnType<typeof booking>[]): AvailabilityInput => ({
  timezone: PARIS,
  suspended: false,
  catalog: { rooms, tables, shifts },
  bookings,
  now: NOW,
});
const reason = (r: ReturnType<typeof checkSlot>) => (r.available ? null : r.failure_reason);
const seven = at('2026-05-01T19:00:00');

const t = suite('room selection');

t('check: no room_id on a room-selection shift is ROOM_SELECTION_REQUIRED; a room makes it bookable', () => {
  assert.is(
    reason(checkSlot(input([selecting]), { start_ms: seven, party_size: 2 })),
    'ROOM_SELECTION_REQUIRED',
  );
  const chosen = checkSlot(input([selecting]), { start_ms: seven, party_size: 2, room_id: 'room_terrace' });
  assert.equal(chosen.available ? [chosen.slot.room_id, chosen.slot.table_ids] : null, [
    'room_terrace',
    ['t1'],
  ]);
  // Chosen tables do not stand for the room.
  assert.is(
    reason(checkSlot(input([selecting]), { start_ms: seven, party_size: 2, table_ids: ['m1'] })),
    'ROOM_SELECTION_REQUIRED',
  );
  assert.is(reason(checkSlot(input([plain]), { start_ms: seven, party_size: 2 })), null);
  assert.is(
    reason(checkSlot(input([selecting]), { start_ms: seven, party_size: 2, room_id: 'room_nope' })),
    'UNKNOWN_ROOM',
  );
});

t('check: reasons that come first still do; several shifts report the most specific', () => {
  const past = checkSlot(input([selecting]), { start_ms: at('2026-05-01T09:00:00'), party_size: 2 });
  assert.is(reason(past), 'OUTSIDE_SHIFT');
  const late = checkSlot(
    { ...input([selecting]), now: new Date(at('2026-05-01T19:30:00')) },
    {
      start_ms: seven,
      party_size: 2,
    },
  );
  assert.is(reason(late), 'TOO_LATE');
  assert.is(
    reason(checkSlot(input([selecting]), { start_ms: seven, party_size: 9 })),
    'PARTY_SIZE_OUT_OF_RANGE',
  );
  // A plain shift offering the same start takes the party when it can…
  const both = checkSlot(input([selecting, plain]), { start_ms: seven, party_size: 2 });
  assert.is(both.available ? both.shift.id : null, 'plain');
  // …and when it is full, its reason (later in the order) is the one reported.
  const full = input(
    [selecting, plain],
    [
      booking({ start_at: '2026-05-01T19:00:00+02:00', shift_id: 'plain', tables: ['m1'] }),
      booking({ start_at: '2026-05-01T19:00:00+02:00', shift_id: 'plain', tables: ['t1'] }),
    ],
  );
  assert.is(reason(checkSlot(full, { start_ms: seven, party_size: 2 })), 'NO_TABLE');
});

const request = (o: Partial<SeatingRequest> = {}): SeatingRequest => ({
  restaurantId: 'rest',
  timezone: PARIS,
  catalog: { rooms, tables, shifts: [selecting], prescribers: [], discounts: [] } as never,
  reservationId: 'res_1',
  externalId: null,
  startMs: seven,
  partySize: 2,
  shiftId: null,
  roomId: null,
  tableIds: null,
  force: false,
  purpose: 'create',
  now: NOW,
  ...o,
});
const early = (o: Partial<SeatingRequest>) => catalogRefusal(request(o))?.reason ?? null;

t('write side: refused before any claim or hold, forced or not; the exact check on an empty day', () => {
  assert.is(early({}), 'ROOM_SELECTION_REQUIRED');
  assert.is(early({ force: true }), 'ROOM_SELECTION_REQUIRED');
  assert.is(
    early({ force: true, shiftId: 'tasting', startMs: at('2026-05-01T19:07:00') }),
    'ROOM_SELECTION_REQUIRED',
  );
  assert.is(early({ roomId: 'room_main' }), null);
  assert.is(early({ roomId: 'room_main', force: true }), null);
  assert.is(early({ roomId: 'room_nope', force: true }), 'UNKNOWN_ROOM');
  assert.is(early({ roomId: 'room_main', force: true, tableIds: ['nope'] }), 'UNKNOWN_TABLE');
  // Refusals that do not depend on other seatings come first too; forced, the hold words them.
  assert.is(early({ now: new Date(at('2026-05-01T19:30:00')) }), 'TOO_LATE');
  assert.is(early({ startMs: at('2026-05-01T19:07:00') }), 'OUTSIDE_SHIFT');
  assert.is(early({ force: true, roomId: 'room_main', startMs: at('2026-05-01T19:07:00') }), null);
  // A plain shift offering the same start may take the party.
  const withPlain = { rooms, tables, shifts: [selecting, plain], prescribers: [], discounts: [] } as never;
  // Forced off the grid without a shift_id: no shift to judge, the hold explains.
  assert.is(early({ catalog: withPlain, force: true, startMs: at('2026-05-01T19:07:00') }), null);
  assert.is(early({ catalog: withPlain }), null);
  assert.is(early({ catalog: withPlain, force: true }), null);
  assert.is(early({ catalog: withPlain, shiftId: 'tasting' }), 'ROOM_SELECTION_REQUIRED');
});

t('property: a refusal on an empty day is the refusal on any day (so it may come before the claim)', () => {
  const arbShift = (id: string) =>
    fc.record({
      id: fc.constant(id),
      rs: fc.boolean(),
      maxCovers: fc.option(fc.integer({ min: 0, max: 8 }), { nil: null }),
      maxParty: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
      end: fc.constantFrom('19:00', '20:00', '21:00'),
      notice: fc.constantFrom(0, 60, 600),
    });
  const arbTables = fc.array(
    fc.record({
      min: fc.integer({ min: 1, max: 3 }),
      extra: fc.integer({ min: 0, max: 4 }),
      room: fc.constantFrom('room_main', 'room_terrace'),
    }),
    { minLength: 1, maxLength: 4 },
  );
  const starts = ['18:45', '19:00', '19:15', '19:30', '20:00', '20:10', '21:00'];
  const arbHeld = fc.record({
    start: fc.constantFrom(...starts),
    table: fc.nat(3),
    party: fc.integer({ min: 1, max: 4 }),
    shift: fc.constantFrom('a', 'b'),
  });
  const arbRequest = fc.record({
    start: fc.constantFrom(...starts),
    party: fc.integer({ min: 1, max: 8 }),
    shift: fc.constantFrom(null, 'a', 'b', 'zz'),
    room: fc.constantFrom(null, 'room_main', 'room_terrace', 'room_nope'),
    tables: fc.constantFrom(null, ['t0'], ['t0', 't1'], ['t9']),
  });
  let refusals = 0;
  fc.assert(
    fc.property(
      arbShift('a'),
      arbShift('b'),
      arbTables,
      fc.array(arbHeld, { maxLength: 6 }),
      arbRequest,
      (sa, sb, tl, held, q) => {
        const shifts = [sa, sb].map((x) =>
          shift({
            id: x.id,
            requires_room_selection: x.rs,
            max_covers: x.maxCovers,
            max_party_size: x.maxParty,
            end_time: x.end,
            minimum_notice_minutes: x.notice,
          }),
        );
        const ts = tl.map((x, i) => table(`t${i}`, x.min, x.min + x.extra, x.room));
        const catalog = { rooms, tables: ts, shifts, prescribers: [], discounts: [] } as never;
        const bookings = held.map((h, i) =>
          booking({
            reservation_id: `h${i}`,
            start_at: `2026-05-01T${h.start}:00+02:00`,
            shift_id: h.shift,
            tables: [`t${h.table % ts.length}`],
            party_size: h.party,
          }),
        );
        const req = request({
          catalog,
          startMs: at(`2026-05-01T${q.start}:00`),
          partySize: q.party,
          shiftId: q.shift,
          roomId: q.room,
          tableIds: q.tables,
          now: new Date(at('2026-05-01T18:30:00')),
        });
        const refusal = catalogRefusal(req);
        if (!refusal) return true;
        refusals++;
        const onTheDay = checkSlot(
          { timezone: PARIS, suspended: false, catalog, bookings, now: req.now },
          {
            start_ms: req.startMs,
            party_size: req.partySize,
            shift_id: req.shiftId,
            room_id: req.roomId,
            table_ids: req.tableIds,
          },
        );
        return !onTheDay.available && onTheDay.failure_reason === refusal.reason;
      },
    ),
    { numRuns: 500 },
  );
  // The property was exercised, not vacuously true.
  assert.ok(refusals > 50);
});

t('write side: the recheck refuses a forced hold without the room', () => {
  const hold = (o: Partial<HoldRequest>) =>
    decideHold(initialCapacity, {
      restaurantId: 'rest',
      reservationId: 'res_1',
      externalId: null,
      serviceDate: '2026-05-01',
      shift: selecting,
      startMs: seven,
      partySize: 2,
      roomId: null,
      tableIds: null,
      force: true,
      purpose: 'create',
      timezone: PARIS,
      catalog: { rooms, tables, shifts: [selecting] },
      now: NOW,
      ...o,
    });
  const refused = (o: Partial<HoldRequest>) => {
    try {
      hold(o);
      return null;
    } catch (err) {
      return err instanceof BusinessRuleError ? err.reason : String(err);
    }
  };
  assert.is(refused({}), 'ROOM_SELECTION_REQUIRED');
  assert.is(refused({ force: false }), 'ROOM_SELECTION_REQUIRED');
  assert.is(hold({ roomId: 'room_terrace' }).seating.room_id, 'room_terrace');
});

t.run();
