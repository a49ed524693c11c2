import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type Booking,
  BookingIndex,
  heldEnd,
  Occupancy,
  overlaps,
  tablesFor,
} from '../../commands/availability/capacity';
import { type AvailabilityInput, checkSlot, searchSlots, slotToApi } from '../../commands/availability/check';
import type { Shift, Table } from '../../commands/catalog/types';
import { booking, room, shift, table } from '../helpers/catalog';

const PARIS = 'Europe/Paris';
const at = (local: string) => Date.parse(`${local}+02:00`);
const NOW = new Date('2026-05-01T08:00:00Z');

type InputOverrides = Partial<AvailabilityInput> & { shifts?: Shift[]; tables?: Table[] };
function input(o: InputOverrides = {}): AvailabilityInput {
  return {
    timezone: PARIS,
    suspended: o.suspended ?? false,
    catalog: {
      rooms: o.catalog?.rooms ?? [room('room_main')],
      tables: o.tables ?? o.catalog?.tables ?? [table('t1', 1, 2)],
      shifts: o.shifts ?? o.catalog?.shifts ?? [shift()],
    },
    bookings: o.bookings ?? [],
    now: o.now ?? NOW,
  };
}

const dinner = (inp: AvailabilityInput, party = 2, extra: { shift_id?: string; room_id?: string } = {}) =>
  searchSlots(inp, {
    from_ms: at('2026-05-01T00:00:00'),
    to_ms: at('2026-05-01T23:59:00'),
    party_size: party,
    ...extra,
  });
const times = (slots: { start_ms: number }[]) =>
  slots.map((s) => new Date(s.start_ms + 2 * 3_600_000).toISOString().slice(11, 16));

const t = suite('availability capacity');

t('reference: one 2-seat table, 90-minute seatings every 15 min from 19:00; a 19:00 booking', () => {
  const before = dinner(input());
  assert.is(before.length, 13);
  const held = input({ bookings: [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['t1'] })] });
  assert.equal(times(dinner(held)), ['20:30', '20:45', '21:00', '21:15', '21:30', '21:45', '22:00']);
  const slot = dinner(held)[0];
  assert.equal(slotToApi(PARIS, slot as never), {
    start_at: '2026-05-01T20:30:00+02:00',
    end_at: '2026-05-01T22:00:00+02:00',
    duration_minutes: 90,
    shift_id: 'shift_dinner',
    room_id: null,
  });
  assert.equal(slot?.table_ids, ['t1']);
});

t('touching seatings do not overlap; one minute of overlap does', () => {
  assert.not.ok(overlaps(0, 10, 10, 20));
  assert.not.ok(overlaps(10, 20, 0, 10));
  assert.ok(overlaps(0, 11, 10, 20));
  const early = shift({ id: 'early', start_time: '17:30', end_time: '17:31' });
  const inp = input({
    shifts: [early],
    bookings: [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['t1'] })],
  });
  // 17:30 + 90 min ends at 19:00 exactly, when the booking starts.
  assert.equal(times(dinner(inp)), ['17:30']);
  const later = input({
    shifts: [early],
    bookings: [booking({ start_at: '2026-05-01T18:59:00+02:00', tables: ['t1'] })],
  });
  assert.equal(dinner(later), []);
});

t('a booking on another table leaves this one free; a booking spanning the slot start blocks it', () => {
  const two = [table('t1', 1, 2), table('t2', 1, 2)];
  const inp = input({
    tables: two,
    bookings: [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['t1'] })],
  });
  const slots = dinner(inp);
  assert.is(slots.length, 13);
  assert.equal(slots[0]?.table_ids, ['t2']);
  // A seating that started before the slot and still runs blocks it.
  const running = input({
    bookings: [booking({ start_at: '2026-05-01T18:00:00+02:00', minutes: 75, tables: ['t1'] })],
  });
  assert.equal(times(dinner(running))[0], '19:15');
});

t('best fit: the smallest table able to seat the party, big tables kept for big parties', () => {
  const tables = [table('t6', 1, 6), table('t2', 1, 2), table('t4', 3, 4)];
  assert.equal(
    tablesFor(tables, 2).map((x) => x.id),
    ['t2', 't6'],
  );
  assert.equal(
    tablesFor(tables, 4).map((x) => x.id),
    ['t4', 't6'],
  );
  const busy = input({
    tables,
    bookings: [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['t2'] })],
  });
  assert.equal(dinner(busy)[0]?.table_ids, ['t6']);
  // min_pax: a 3–4 table does not take a couple.
  assert.equal(
    tablesFor([table('t4', 3, 4)], 2).map((x) => x.id),
    [],
  );
});

t('max_covers caps the covers of a shift per service day', () => {
  const s = shift({ max_covers: 4 });
  const tables = [table('t1', 1, 4), table('t2', 1, 4)];
  const held = [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['t1'], party_size: 3 })];
  assert.equal(dinner(input({ shifts: [s], tables, bookings: held }), 2), []);
  assert.is(dinner(input({ shifts: [s], tables, bookings: held }), 1).length, 13);
  const check = checkSlot(input({ shifts: [s], tables, bookings: held }), {
    start_ms: at('2026-05-01T21:00:00'),
    party_size: 2,
  });
  assert.equal(check.available ? null : check.failure_reason, 'MAX_COVERS_REACHED');
  // Another day, or another shift, does not count.
  const elsewhere = [
    booking({ start_at: '2026-05-02T19:00:00+02:00', tables: ['t1'], party_size: 4 }),
    booking({ start_at: '2026-05-01T12:00:00+02:00', shift_id: 'lunch', tables: ['t1'], party_size: 4 }),
  ];
  assert.is(dinner(input({ shifts: [s], tables, bookings: elsewhere }), 4).length, 13);
});

t('room selection: one slot per room able to seat the party, and the room filter', () => {
  const s = shift({ requires_room_selection: true, start_time: '19:00', end_time: '19:00' });
  const rooms = [room('room_main'), room('room_terrace'), room('room_private')];
  const tables = [
    table('m1', 1, 2, 'room_main'),
    table('t1', 1, 4, 'room_terrace'),
    table('p1', 6, 10, 'room_private'),
  ];
  const inp = input({ shifts: [s], tables, catalog: { rooms, tables, shifts: [s] } });
  assert.equal(
    dinner(inp, 2).map((x) => x.room_id),
    ['room_main', 'room_terrace'],
  );
  assert.equal(
    dinner(inp, 2, { room_id: 'room_terrace' }).map((x) => [x.room_id, x.table_ids[0]]),
    [['room_terrace', 't1']],
  );
  const full = input({
    shifts: [s],
    catalog: { rooms, tables, shifts: [s] },
    bookings: [booking({ start_at: '2026-05-01T19:00:00+02:00', tables: ['m1'] })],
  });
  assert.equal(
    dinner(full, 2).map((x) => x.room_id),
    ['room_terrace'],
  );
  // Without room selection, a room filter restricts the tables but the slot carries no room.
  const plain = input({ catalog: { rooms, tables, shifts: [shift({ end_time: '19:00' })] } });
  const filtered = dinner(plain, 2, { room_id: 'room_terrace' });
  assert.equal(
    filtered.map((x) => [x.room_id, x.table_ids[0], x.seated_room_id]),
    [[null, 't1', 'room_terrace']],
  );
});

t('party size limits: the shift min/max, else the largest table', () => {
  const s = shift({ min_party_size: 2, max_party_size: 6 });
  const tables = [table('t1', 1, 8)];
  const reason = (party: number, sh = s) => {
    const r = checkSlot(input({ shifts: [sh], tables }), {
      start_ms: at('2026-05-01T19:00:00'),
      party_size: party,
    });
    return r.available ? null : r.failure_reason;
  };
  assert.is(reason(1), 'PARTY_SIZE_OUT_OF_RANGE');
  assert.is(reason(2), null);
  assert.is(reason(6), null);
  assert.is(reason(7), 'PARTY_SIZE_OUT_OF_RANGE');
  assert.is(reason(8, shift()), null);
  assert.is(reason(9, shift()), 'PARTY_SIZE_OUT_OF_RANGE');
  assert.equal(dinner(input({ shifts: [s], tables }), 7), []);
});

t('minimum notice and booking window, from now', () => {
  const s = shift({ minimum_notice_minutes: 60, booking_window_days: 2 });
  const now = new Date(at('2026-05-01T18:10:00'));
  const reason = (start: string) => {
    const r = checkSlot(input({ shifts: [s], now }), { start_ms: at(start), party_size: 2 });
    return r.available ? null : r.failure_reason;
  };
  assert.is(reason('2026-05-01T19:00:00'), 'TOO_LATE');
  assert.is(reason('2026-05-01T19:15:00'), null);
  assert.is(reason('2026-05-03T22:00:00'), null);
  assert.is(reason('2026-05-04T19:00:00'), 'TOO_FAR');
  // Exactly now + notice is allowed.
  const exact = checkSlot(input({ shifts: [s], now: new Date(at('2026-05-01T18:00:00')) }), {
    start_ms: at('2026-05-01T19:00:00'),
    party_size: 2,
  });
  assert.ok(exact.available);
  // A past start is too late even without notice.
  const past = checkSlot(input({ now: new Date(at('2026-05-01T19:01:00')) }), {
    start_ms: at('2026-05-01T19:00:00'),
    party_size: 2,
  });
  assert.equal(past.available ? null : past.failure_reason, 'TOO_LATE');
  assert.equal(times(dinner(input({ shifts: [s], now }))).slice(0, 2), ['19:15', '19:30']);
});

t('check failures: suspended, unknown ids, outside the shift', () => {
  const reason = (o: InputOverrides, req: Record<string, unknown>) => {
    const r = checkSlot(input(o), { start_ms: at('2026-05-01T19:00:00'), party_size: 2, ...req });
    return r.available ? null : r.failure_reason;
  };
  assert.is(reason({ suspended: true }, {}), 'RESTAURANT_SUSPENDED');
  assert.equal(
    searchSlots(input({ suspended: true }), { from_ms: 0, to_ms: at('2026-06-01T00:00:00'), party_size: 2 }),
    [],
  );
  assert.is(reason({}, { shift_id: 'nope' }), 'UNKNOWN_SHIFT');
  assert.is(reason({}, { room_id: 'nope' }), 'UNKNOWN_ROOM');
  assert.is(reason({}, { table_ids: ['nope'] }), 'UNKNOWN_TABLE');
  assert.is(reason({}, { start_ms: at('2026-05-01T19:05:00') }), 'OUTSIDE_SHIFT');
  assert.is(reason({}, { start_ms: at('2026-05-01T22:15:00') }), 'OUTSIDE_SHIFT');
  assert.is(reason({ shifts: [shift({ days_of_week: [1] })] }, {}), 'OUTSIDE_SHIFT');
  assert.is(
    reason({ bookings: [booking({ start_at: '2026-05-01T18:00:00+02:00', tables: ['t1'] })] }, {}),
    'NO_TABLE',
  );
  // Any offset names the same instant.
  assert.is(reason({}, { start_ms: Date.parse('2026-05-01T17:00:00Z') }), null);
});

t('check answers the assigned table, the service day and the seating', () => {
  const r = checkSlot(input({ tables: [table('t6', 1, 6), table('t2', 1, 2)] }), {
    start_ms: at('2026-05-01T19:30:00'),
    party_size: 2,
  });
  assert.ok(r.available);
  if (!r.available) return;
  assert.equal(r.slot.table_ids, ['t2']);
  assert.is(r.slot.service_date, '2026-05-01');
  assert.is(r.slot.end_ms - r.slot.start_ms, 90 * 60_000);
  assert.is(r.shift.id, 'shift_dinner');
});

t('check with chosen tables: they must be free and together seat the party', () => {
  const tables = [table('a', 1, 2), table('b', 1, 2), table('c', 1, 4, 'room_terrace')];
  const inp = (bookings: Booking[] = []) =>
    input({
      tables,
      bookings,
      catalog: { rooms: [room('room_main'), room('room_terrace')], tables, shifts: [shift()] },
    });
  const req = { start_ms: at('2026-05-01T19:00:00'), party_size: 4, table_ids: ['a', 'b'] };
  const ok = checkSlot(inp(), req);
  assert.equal(ok.available ? ok.slot.table_ids : null, ['a', 'b']);
  const busy = checkSlot(inp([booking({ start_at: '2026-05-01T20:00:00+02:00', tables: ['b'] })]), req);
  assert.equal(busy.available ? null : busy.failure_reason, 'NO_TABLE');
  // Two tables of min_pax 1 need at least two guests.
  const tooFew = checkSlot(inp(), { ...req, party_size: 1 });
  assert.equal(tooFew.available ? null : tooFew.failure_reason, 'NO_TABLE');
  // Beyond every table and the chosen ones together, the party is out of range.
  const tooMany = checkSlot(inp(), { ...req, party_size: 5 });
  assert.equal(tooMany.available ? null : tooMany.failure_reason, 'PARTY_SIZE_OUT_OF_RANGE');
  const wrongRoom = checkSlot(inp(), { ...req, room_id: 'room_terrace' });
  assert.equal(wrongRoom.available ? null : wrongRoom.failure_reason, 'NO_TABLE');
});

t('overlapping shifts: the first that can seat the party wins, else the most specific reason', () => {
  const a = shift({ id: 'a', max_covers: 2 });
  const b = shift({ id: 'b', max_party_size: 1 });
  const held = [
    booking({ start_at: '2026-05-01T19:00:00+02:00', shift_id: 'a', tables: ['x'], party_size: 2 }),
  ];
  const r = checkSlot(
    input({ shifts: [b, a], tables: [table('t1', 1, 2), table('x', 1, 2)], bookings: held }),
    {
      start_ms: at('2026-05-01T19:00:00'),
      party_size: 2,
    },
  );
  assert.equal(r.available ? null : r.failure_reason, 'MAX_COVERS_REACHED');
  const free = checkSlot(input({ shifts: [b, a], tables: [table('t1', 1, 2)] }), {
    start_ms: at('2026-05-01T19:00:00'),
    party_size: 2,
  });
  assert.equal(free.available ? free.shift.id : null, 'a');
});

t('a duration rule by party size sets the seating length', () => {
  const s = shift({ durations_by_party_size: [{ max_party_size: 2, duration_minutes: 60 }] });
  const slots = dinner(input({ shifts: [s], tables: [table('t1', 1, 4)] }), 2);
  assert.is(slots[0]?.duration_minutes, 60);
  assert.is(dinner(input({ shifts: [s], tables: [table('t1', 1, 4)] }), 3)[0]?.duration_minutes, 90);
});

// ---- properties -------------------------------------------------------------------------------

const arbTables = fc
  .array(
    fc.record({
      min: fc.integer({ min: 1, max: 3 }),
      extra: fc.integer({ min: 0, max: 4 }),
      room: fc.constantFrom('r1', 'r2'),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map((list) => list.map((x, i) => table(`t${i}`, x.min, x.min + x.extra, x.room)));
const arbShiftCfg = fc.record({
  interval: fc.constantFrom(15, 30, 45),
  duration: fc.constantFrom(45, 60, 90, 120),
  maxCovers: fc.option(fc.integer({ min: 2, max: 30 }), { nil: null }),
  rooms: fc.boolean(),
});

t('property: booking slot after slot never double-books a table nor exceeds max_covers', () => {
  fc.assert(
    fc.property(
      arbTables,
      arbShiftCfg,
      fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 40 }),
      (tables, cfg, parties) => {
        const s = shift({
          slot_interval_minutes: cfg.interval,
          duration_minutes: cfg.duration,
          max_covers: cfg.maxCovers,
          requires_room_selection: cfg.rooms,
          end_time: '21:00',
        });
        const catalog = { rooms: [room('r1'), room('r2')], tables, shifts: [s] };
        const bookings: Booking[] = [];
        for (const [i, party] of parties.entries()) {
          const slots = searchSlots(
            { timezone: PARIS, suspended: false, catalog, bookings, now: NOW },
            { from_ms: at('2026-05-01T00:00:00'), to_ms: at('2026-05-01T23:59:00'), party_size: party },
          );
          // Take a slot picked by the party index, to spread bookings over the evening.
          const slot = slots[(i * 7) % Math.max(1, slots.length)];
          if (!slot) continue;
          // The exact check agrees with the search.
          const check = checkSlot(
            { timezone: PARIS, suspended: false, catalog, bookings, now: NOW },
            { start_ms: slot.start_ms, party_size: party, room_id: slot.room_id },
          );
          if (!check.available) return false;
          bookings.push({
            reservation_id: `r${i}`,
            service_date: slot.service_date,
            shift_id: slot.shift_id,
            room_id: slot.room_id,
            table_ids: slot.table_ids,
            start_ms: slot.start_ms,
            end_ms: slot.end_ms,
            party_size: party,
          });
        }
        for (const [i, a] of bookings.entries())
          for (const b of bookings.slice(i + 1))
            if (
              a.table_ids.some((x) => b.table_ids.includes(x)) &&
              overlaps(a.start_ms, a.end_ms, b.start_ms, b.end_ms)
            )
              return false;
        const covers = bookings.reduce((n, b) => n + b.party_size, 0);
        return cfg.maxCovers === null || covers <= cfg.maxCovers;
      },
    ),
    { numRuns: 200 },
  );
});

t(
  'property: a start is offered exactly when some fitting table has no overlapping booking (brute force)',
  () => {
    fc.assert(
      fc.property(
        arbTables,
        fc.array(
          fc.record({
            table: fc.integer({ min: 0, max: 4 }),
            start: fc.integer({ min: 0, max: 20 }),
            len: fc.integer({ min: 1, max: 12 }),
          }),
          { maxLength: 12 },
        ),
        fc.integer({ min: 1, max: 6 }),
        (tables, raw, party) => {
          const base = at('2026-05-01T18:00:00');
          const bookings = raw.map((r, i) =>
            booking({
              reservation_id: `b${i}`,
              start_at: new Date(base + r.start * 15 * 60_000).toISOString(),
              service_date: '2026-05-01',
              tables: [`t${r.table}`],
              end_ms: base + (r.start + r.len) * 15 * 60_000,
            }),
          );
          const slots = dinner(
            input({
              tables,
              bookings,
              catalog: { rooms: [room('r1'), room('r2')], tables, shifts: [shift()] },
            }),
            party,
          );
          const offered = new Set(slots.map((x) => x.start_ms));
          const occupancy = new Occupancy(bookings);
          for (let k = 0; k <= 12; k++) {
            const start = at('2026-05-01T19:00:00') + k * 15 * 60_000;
            const end = start + 90 * 60_000;
            const free = tables.some(
              (tb) =>
                tb.min_pax <= party &&
                party <= tb.max_pax &&
                bookings.every(
                  (b) => !b.table_ids.includes(tb.id) || !overlaps(b.start_ms, b.end_ms, start, end),
                ),
            );
            if (free !== offered.has(start)) return false;
            if (
              free !==
              tables.some(
                (tb) => tb.min_pax <= party && party <= tb.max_pax && occupancy.isFree(tb.id, start, end),
              )
            )
              return false;
          }
          return true;
        },
      ),
      { numRuns: 300 },
    );
  },
);

t('property: the sweep over many starts agrees with the per-start search, overlaps included', () => {
  fc.assert(
    fc.property(
      arbTables,
      fc.array(
        fc.record({
          table: fc.integer({ min: 0, max: 4 }),
          start: fc.integer({ min: 0, max: 40 }),
          len: fc.integer({ min: 1, max: 12 }),
          day: fc.constantFrom('2026-05-01', '2026-05-02'),
        }),
        { maxLength: 20 },
      ),
      fc.uniqueArray(fc.integer({ min: 0, max: 44 }), { maxLength: 20 }),
      fc.integer({ min: 1, max: 10 }),
      (tables, raw, startSteps, len) => {
        const base = at('2026-05-01T20:00:00');
        const step = 15 * 60_000;
        const make = (list: typeof raw) =>
          list.map((r, i) =>
            booking({
              reservation_id: `b${i}`,
              start_at: new Date(base + r.start * step).toISOString(),
              service_date: r.day,
              tables: [`t${r.table}`],
              end_ms: base + (r.start + r.len) * step,
            }),
          );
        // Two parts (one per day), as the read side combines them.
        const occupancy = new Occupancy({
          combine: [
            new Occupancy(make(raw.filter((r) => r.day === '2026-05-01'))),
            new Occupancy(make(raw.filter((r) => r.day === '2026-05-02'))),
          ],
        });
        const starts = [...startSteps].sort((a, b) => a - b).map((k) => base + k * step);
        const swept = occupancy.firstFreeForEach(tables, starts, len * step);
        // The second answer comes from the memo: it must be the same.
        const again = occupancy.firstFreeForEach(tables, starts, len * step);
        const reversed = occupancy.firstFreeForEach([...tables].reverse(), starts, len * step);
        return starts.every(
          (s, i) =>
            swept[i] === occupancy.firstFree(tables, s, s + len * step) &&
            again[i] === swept[i] &&
            reversed[i] === occupancy.firstFree([...tables].reverse(), s, s + len * step),
        );
      },
    ),
    { numRuns: 500 },
  );
});

t(
  'property: an ended seating (DONE, NO_SHOW) holds its tables up to the end only, every reader agreeing (brute force)',
  () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            table: fc.integer({ min: 0, max: 3 }),
            start: fc.integer({ min: 0, max: 30 }),
            len: fc.integer({ min: 1, max: 18 }),
            party: fc.integer({ min: 1, max: 6 }),
            // Steps after the start (negative: ended before it began; past len: after its end).
            ended: fc.option(fc.integer({ min: -4, max: 22 }), { nil: null }),
          }),
          { maxLength: 14 },
        ),
        fc.array(
          fc.record({ start: fc.integer({ min: -2, max: 50 }), len: fc.integer({ min: 1, max: 18 }) }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.integer({ min: 1, max: 12 }),
        (raw, queries, sweepLen) => {
          const base = at('2026-05-01T18:00:00');
          const step = 5 * 60_000;
          const tables = [0, 1, 2, 3].map((i) => ({ id: `t${i}` }));
          const bookings: Booking[] = raw.map((r, i) => ({
            reservation_id: `b${i}`,
            service_date: '2026-05-01',
            shift_id: 'shift_dinner',
            room_id: null,
            table_ids: [`t${r.table}`],
            start_ms: base + r.start * step,
            end_ms: base + (r.start + r.len) * step,
            party_size: r.party,
            ...(r.ended === null ? {} : { ended_ms: base + (r.start + r.ended) * step }),
          }));
          // The meaning: the tables are held for [start, min(end, ended)), nothing when that is empty.
          const holds = (b: Booking, table: string, from: number, to: number) => {
            const ended = b.ended_ms == null ? b.end_ms : Math.min(b.end_ms, b.ended_ms);
            return b.table_ids.includes(table) && ended > b.start_ms && overlaps(b.start_ms, ended, from, to);
          };
          const free = (table: string, from: number, to: number) =>
            bookings.every((b) => !holds(b, table, from, to));
          // The same seatings cut at their end beforehand, without ended_ms: what the ended ones mean.
          const cut = new Occupancy(
            bookings.map((b) => ({
              ...b,
              ended_ms: null,
              end_ms: heldEnd(b),
              table_ids: heldEnd(b) > b.start_ms ? b.table_ids : [],
            })),
          );
          const occupancy = new Occupancy(bookings);
          const index = new BookingIndex();
          // Added, some removed and added again (the write side's fold): the same content.
          for (const b of bookings) index.add(b);
          for (const b of bookings.filter((_, i) => i % 3 === 0)) index.remove(b);
          for (const b of bookings.filter((_, i) => i % 3 === 0)) index.add(b);
          const folded = index.occupancy();
          const except = bookings[0];
          const withoutFirst = except ? index.occupancy(except) : null;
          for (const q of queries) {
            const from = base + q.start * step;
            const to = from + q.len * step;
            for (const tb of tables) {
              const expected = free(tb.id, from, to);
              if (occupancy.isFree(tb.id, from, to) !== expected) return false;
              if (folded.isFree(tb.id, from, to) !== expected) return false;
              if (cut.isFree(tb.id, from, to) !== expected) return false;
              if (
                withoutFirst &&
                except &&
                withoutFirst.isFree(tb.id, from, to) !==
                  bookings.every((b) => b === except || !holds(b, tb.id, from, to))
              )
                return false;
            }
            const first = tables.find((tb) => free(tb.id, from, to)) ?? null;
            if (occupancy.firstFree(tables, from, to) !== first) return false;
            if (folded.firstFree(tables, from, to) !== first) return false;
          }
          const starts = [...new Set(queries.map((q) => base + q.start * step))].sort((a, b) => a - b);
          const swept = occupancy.firstFreeForEach(tables, starts, sweepLen * step);
          if (
            !starts.every(
              (s, i) => swept[i] === (tables.find((tb) => free(tb.id, s, s + sweepLen * step)) ?? null),
            )
          )
            return false;
          // Covers: a seating that ended still counts in its shift's covers.
          const covers = bookings.reduce((n, b) => n + b.party_size, 0);
          return (
            occupancy.coversHeld('2026-05-01', 'shift_dinner') === covers &&
            folded.coversHeld('2026-05-01', 'shift_dinner') === covers
          );
        },
      ),
      { numRuns: 500 },
    );
  },
);

t.run();
