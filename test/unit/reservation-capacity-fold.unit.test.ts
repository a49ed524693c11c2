// The capacity fold kept incrementally (capacity-state.ts: states sharing a timeline, the newest one
// keeping the day's occupancy index) against the plain fold it replaces, and the handler's fold cache
// against appends it did not make.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bookingFromSeating, Occupancy } from '../../commands/availability/capacity';
import { capacityStream, type SeatingHeldData } from '../../commands/availability/capacity-events';
import type { Catalog, Shift } from '../../commands/catalog/types';
import {
  decideEnd,
  decideHold,
  decideHoldAgain,
  decideResume,
  type HoldRequest,
} from '../../commands/reservations/capacity-decide';
import { appendToCapacity, loadCapacity } from '../../commands/reservations/capacity-handler';
import {
  type CapacityState,
  evolveCapacity,
  initialCapacity,
  occupancyExcept,
} from '../../commands/reservations/capacity-state';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { systemClock } from '../../src/core/clock';
import { BusinessRuleError } from '../../src/core/errors';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store';
import { catalogOf, shift as dinnerShift } from '../helpers/catalog';

const DAY = '2026-06-03';
const TABLES = ['t1', 't2', 't3', 't4'];
const at = (minutes: number) => Date.parse(`${DAY}T18:00:00Z`) + minutes * 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

type Op =
  | {
      kind: 'hold';
      id: number;
      start: number;
      length: number;
      tables: string[];
      party: number;
      shift: string;
    }
  | { kind: 'release'; id: number }
  /** A move's seating, pending beside the reservation's own (move: its id). */
  | {
      kind: 'move';
      id: number;
      move: number;
      start: number;
      length: number;
      tables: string[];
      party: number;
      shift: string;
    }
  | { kind: 'confirm'; id: number; move: number }
  | { kind: 'drop'; id: number; move: number }
  /** SeatingEnded (DONE, NO_SHOW): its tables free from `at` (minutes, like start). */
  | { kind: 'end'; id: number; at: number };

const seatingFields = {
  id: fc.integer({ min: 0, max: 15 }),
  start: fc.integer({ min: 0, max: 20 }).map((n) => n * 15),
  length: fc.constantFrom(15, 30, 90),
  // Empty (covers only), one table, two, or the same table twice (a forced seating may name it twice).
  tables: fc.oneof(
    fc.subarray(TABLES, { maxLength: 2 }),
    fc.constantFrom(...TABLES).map((t) => [t, t]),
  ),
  party: fc.integer({ min: 1, max: 8 }),
  shift: fc.constantFrom('lunch', 'dinner'),
};
const move = fc.integer({ min: 0, max: 2 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('hold' as const), ...seatingFields }),
  fc.record({ kind: fc.constant('release' as const), id: fc.integer({ min: 0, max: 15 }) }),
  fc.record({ kind: fc.constant('move' as const), move, ...seatingFields }),
  fc.record({ kind: fc.constant('confirm' as const), id: seatingFields.id, move }),
  fc.record({ kind: fc.constant('drop' as const), id: seatingFields.id, move }),
  fc.record({
    kind: fc.constant('end' as const),
    id: seatingFields.id,
    at: fc.integer({ min: -1, max: 22 }).map((n) => n * 15),
  }),
);

/** The pending moves of the plain fold, by reservation then move id. */
type PlainPending = Map<string, Map<string, SeatingHeldData>>;

let position = 0n;
function recorded(o: Op): RecordedEvent {
  const reservation_id = `r${o.id}`;
  const base = { id: String(position), metadata: {}, created: '', stream: 'capacity', revision: 0 };
  position++;
  if (o.kind === 'confirm' || o.kind === 'drop') {
    // A confirm carries the seating of the move it confirms (the last one generated under its id).
    const confirmed = o.kind === 'confirm' ? pendingSeating.get(`${reservation_id}#${o.move}`) : undefined;
    return {
      ...base,
      position,
      type: confirmed ? 'SeatingMoveConfirmed' : 'SeatingMoveDropped',
      data: {
        ...confirmed,
        restaurant_id: 'rest_1',
        service_date: DAY,
        reservation_id,
        move_id: `m${o.move}`,
        reason: 'UPDATE_REFUSED',
        at: '',
      },
    };
  }
  if (o.kind === 'end')
    return {
      ...base,
      position,
      type: 'SeatingEnded',
      data: {
        restaurant_id: 'rest_1',
        service_date: DAY,
        reservation_id,
        ended_at: iso(at(o.at)),
        reason: 'DONE',
        at: '',
      },
    };
  if (o.kind === 'release')
    return {
      ...base,
      position,
      type: 'SeatingReleased',
      data: { restaurant_id: 'rest_1', service_date: DAY, reservation_id, reason: 'CANCELED', at: '' },
    };
  const data: SeatingHeldData = {
    restaurant_id: 'rest_1',
    service_date: DAY,
    reservation_id,
    shift_id: o.shift,
    room_id: null,
    table_ids: o.tables,
    start_at: iso(at(o.start)),
    end_at: iso(at(o.start + o.length)),
    party_size: o.party,
    at: '',
  };
  if (o.kind === 'move') {
    const moved = { ...data, move_id: `m${o.move}` };
    pendingSeating.set(`${reservation_id}#${o.move}`, moved);
    return { ...base, position, type: 'SeatingMoveHeld', data: moved as unknown as Record<string, unknown> };
  }
  return { ...base, position, type: 'SeatingHeld', data: data as unknown as Record<string, unknown> };
}
/** The last seating generated for each (reservation, move): what a confirm of it carries. */
const pendingSeating = new Map<string, SeatingHeldData>();

/** The fold as it was written first: plain Maps, copied at every event. */
function plainFoldAll(events: RecordedEvent[]): {
  held: Map<string, SeatingHeldData>;
  pending: PlainPending;
} {
  let held = new Map<string, SeatingHeldData>();
  const pending: PlainPending = new Map();
  for (const e of events) {
    const d = e.data as unknown as SeatingHeldData & { move_id: string };
    const id = d.reservation_id;
    held = new Map(held);
    const moves = pending.get(id) ?? new Map<string, SeatingHeldData>();
    switch (e.type) {
      case 'SeatingHeld':
        held.set(id, d);
        break;
      case 'SeatingReleased':
        held.delete(id);
        break;
      case 'SeatingEnded': {
        const current = held.get(id);
        const ended_at = (e.data as { ended_at: string }).ended_at;
        if (current) held.set(id, { ...current, ended_at });
        break;
      }
      case 'SeatingMoveHeld':
        moves.set(d.move_id, d);
        break;
      case 'SeatingMoveConfirmed': {
        const { move_id: _, ...seating } = d;
        held.set(id, seating);
        moves.delete(d.move_id);
        break;
      }
      case 'SeatingMoveDropped':
        moves.delete(d.move_id);
        break;
    }
    if (moves.size) pending.set(id, moves);
    else pending.delete(id);
  }
  return { held, pending };
}
const plainFold = (events: RecordedEvent[]) => plainFoldAll(events).held;

/** Every seating that takes capacity in the plain fold: the reservations' own and their moves'. */
const plainTaken = (events: RecordedEvent[]) => {
  const { held, pending } = plainFoldAll(events);
  return [...held.values(), ...[...pending.values()].flatMap((m) => [...m.values()])];
};
const pendingOf = (state: CapacityState) =>
  [...state.pending.entries()]
    .map(([id, m]) => [id, [...m.entries()].sort(([a], [b]) => a.localeCompare(b))] as const)
    .sort(([a], [b]) => a.localeCompare(b));
const plainPendingOf = (pending: PlainPending) =>
  [...pending.entries()]
    .map(([id, m]) => [id, [...m.entries()].sort(([a], [b]) => a.localeCompare(b))] as const)
    .sort(([a], [b]) => a.localeCompare(b));

const sorted = (m: ReadonlyMap<string, SeatingHeldData>) =>
  [...m.entries()].sort(([a], [b]) => a.localeCompare(b));

/** Every question a recheck asks of the occupancy, answered by both indexes alike. */
function sameAnswers(got: Occupancy, want: Occupancy) {
  for (const shift of ['lunch', 'dinner'])
    assert.is(got.coversHeld(DAY, shift), want.coversHeld(DAY, shift), `covers of ${shift}`);
  const tables = TABLES.map((id) => ({ id }));
  for (let s = -15; s <= 330; s += 15)
    for (const length of [15, 60]) {
      for (const t of TABLES)
        assert.is(got.isFree(t, at(s), at(s + length)), want.isFree(t, at(s), at(s + length)));
      assert.is(
        got.firstFree(tables, at(s), at(s + length))?.id,
        want.firstFree(tables, at(s), at(s + length))?.id,
      );
    }
  const starts = Array.from({ length: 20 }, (_, i) => at(i * 15));
  assert.equal(
    got.firstFreeForEach(tables, starts, 30 * 60_000).map((t) => t?.id),
    want.firstFreeForEach(tables, starts, 30 * 60_000).map((t) => t?.id),
  );
}

test('the incremental fold holds what the plain fold holds, and its occupancy answers alike', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 80 }), fc.integer({ min: 0, max: 15 }), (ops, except) => {
      const events = ops.map(recorded);
      const state = events.reduce(evolveCapacity, initialCapacity);
      const { held: plain, pending } = plainFoldAll(events);
      assert.equal(sorted(state.held), sorted(plain));
      assert.is(state.held.size, plain.size);
      for (let id = 0; id <= 15; id++) assert.equal(state.held.get(`r${id}`), plain.get(`r${id}`));
      assert.equal(pendingOf(state), plainPendingOf(pending));
      // Pending moves take capacity for everyone else; a reservation's own are not in its way.
      const others = plainTaken(events).filter((s) => s.reservation_id !== `r${except}`);
      sameAnswers(occupancyExcept(state, `r${except}`), new Occupancy(others.map(bookingFromSeating)));
    }),
    { numRuns: 300 },
  );
});

test('every earlier state still reads its own version, and folding onto one leaves the newer ones alone', () => {
  fc.assert(
    fc.property(
      fc.array(op, { minLength: 1, maxLength: 40 }),
      fc.array(op, { minLength: 1, maxLength: 10 }),
      fc.nat(),
      (ops, branch, pick) => {
        const events = ops.map(recorded);
        const states: CapacityState[] = [initialCapacity];
        for (const e of events) states.push(evolveCapacity(states.at(-1) as CapacityState, e));
        // Fold a branch onto an older state, as two folds from one cached state do.
        const k = pick % states.length;
        const branchEvents = branch.map(recorded);
        const forked = branchEvents.reduce(evolveCapacity, states[k] as CapacityState);
        const forkedEvents = [...events.slice(0, k), ...branchEvents];
        assert.equal(sorted(forked.held), sorted(plainFold(forkedEvents)));
        const others = plainTaken(forkedEvents).map(bookingFromSeating);
        sameAnswers(occupancyExcept(forked, 'none'), new Occupancy(others));
        // The original line is untouched, at every version.
        states.forEach((s, i) => {
          const plain = plainFold(events.slice(0, i));
          assert.equal(sorted(s.held), sorted(plain));
          sameAnswers(
            occupancyExcept(s, 'none'),
            new Occupancy(plainTaken(events.slice(0, i)).map(bookingFromSeating)),
          );
        });
      },
    ),
    { numRuns: 150 },
  );
});

// --- the handler's cache of folds, against appends made around it ---

const shift: Shift = dinnerShift();
const catalog: Catalog = catalogOf(
  [
    { id: 'ta', name: 'A', room_id: 'room_main', min_pax: 1, max_pax: 4 },
    { id: 'tb', name: 'B', room_id: 'room_main', min_pax: 1, max_pax: 4 },
  ],
  [shift],
);
const request = (reservationId: string): HoldRequest => ({
  restaurantId: 'rest_1',
  reservationId,
  externalId: null,
  serviceDate: DAY,
  shift,
  startMs: Date.parse(`${DAY}T19:00:00+02:00`),
  partySize: 2,
  roomId: null,
  tableIds: null,
  force: false,
  purpose: 'create',
  timezone: 'Europe/Paris',
  catalog,
  now: new Date('2026-06-01T10:00:00Z'),
});
const meta = { actor: 'test' };
const stream = capacityStream('rest_1', DAY);
const hold = (events: EventStore, id: string) =>
  appendToCapacity(
    { events, clock: systemClock },
    'rest_1',
    DAY,
    (s) => decideHold(s, request(id)).events,
    meta,
  );
async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    if (err instanceof BusinessRuleError) return err.reason;
    throw err;
  }
  assert.unreachable('the hold was not refused');
  return '';
}
const fullFold = async (events: EventStore) =>
  (await events.readStream(stream)).reduce(evolveCapacity, initialCapacity);

test('an append made elsewhere between the fold and the append: the retry decides on it', async () => {
  const store = new MemoryEventStore();
  await hold(store, 'res_1'); // takes ta
  let foreign = true;
  // Another process holds tb just before this one's append lands: the expected revision fails.
  const racing: EventStore = {
    kind: store.kind,
    readStream: (...a) => store.readStream(...a),
    readAll: (...a) => store.readAll(...a),
    subscribe: (...a) => store.subscribe(...a),
    headPosition: () => store.headPosition(),
    close: () => store.close(),
    append: async (...args) => {
      if (foreign && args[0] === stream) {
        foreign = false;
        const other = decideHold(await fullFold(store), request('res_other')).events;
        await store.append(stream, other, 0);
      }
      return store.append(...args);
    },
  };
  // The cache is per store object: prime the racing view's cache too, at revision 0.
  await loadCapacity({ events: racing, clock: systemClock }, 'rest_1', DAY);
  foreign = true;
  assert.is(await refusal(hold(racing, 'res_2')), 'NO_TABLE');
  const cached = await loadCapacity({ events: racing, clock: systemClock }, 'rest_1', DAY);
  assert.equal(sorted(cached.held), sorted((await fullFold(store)).held));
  assert.equal([...cached.held.keys()].sort(), ['res_1', 'res_other']);
});

test('an append made elsewhere since the cached fold: the next decision sees it', async () => {
  const store = new MemoryEventStore();
  const deps = { events: store, clock: systemClock };
  await hold(store, 'res_1');
  await loadCapacity(deps, 'rest_1', DAY); // the fold at revision 0 is cached
  // Another process (or the repair job) appends without going through this cache.
  const state = await fullFold(store);
  await store.append(stream, decideHold(state, request('res_other')).events, 0);
  assert.is(await refusal(hold(store, 'res_2')), 'NO_TABLE');
  const cached = await loadCapacity(deps, 'rest_1', DAY);
  assert.equal(sorted(cached.held), sorted((await fullFold(store)).held));
  assert.equal(
    sorted(cached.held).map(([, s]) => s.table_ids),
    [['ta'], ['tb']],
  );
});

test('ending a seating: only before its end, once per instant; a no-show resumed holds it again unless its table was sold', () => {
  const seat = (id: string, start: number, length: number, tables: string[]): RecordedEvent =>
    recorded({ kind: 'hold', id: Number(id), start, length, tables, party: 2, shift: 'dinner' });
  let state = [seat('1', 60, 90, ['t1'])].reduce(evolveCapacity, initialCapacity);
  assert.equal(decideEnd(state, 'r2', iso(at(100)), 'DONE', ''), [], 'no seating: nothing');
  assert.equal(decideEnd(state, 'r1', iso(at(150)), 'DONE', ''), [], 'at its end: nothing freed');
  assert.equal(decideEnd(state, 'r1', iso(at(200)), 'DONE', ''), [], 'after its end: nothing freed');
  assert.equal(decideResume(state, 'r1', new Date(at(100))), [], 'never ended: nothing to resume');
  const [ended] = decideEnd(state, 'r1', iso(at(100)), 'NO_SHOW', 'now');
  assert.equal(ended?.data, {
    restaurant_id: 'rest_1',
    service_date: DAY,
    reservation_id: 'r1',
    ended_at: iso(at(100)),
    reason: 'NO_SHOW',
    at: 'now',
  });
  state = evolveCapacity(state, {
    ...recorded({ kind: 'release', id: 99 }),
    ...ended,
    position: 900n,
  } as RecordedEvent);
  assert.is(state.held.get('r1')?.ended_at, iso(at(100)));
  assert.equal(decideEnd(state, 'r1', iso(at(100)), 'NO_SHOW', ''), [], 'ended then already');
  assert.ok(occupancyExcept(state, 'x').isFree('t1', at(100), at(150)));
  assert.not.ok(occupancyExcept(state, 'x').isFree('t1', at(90), at(101)), 'the part before stays held');
  // Resumed while the table is free: the whole seating again, without ended_at.
  const [again] = decideResume(state, 'r1', new Date(at(110)));
  assert.is(again?.type, 'SeatingHeld');
  const resumed = (again?.data ?? {}) as { ended_at?: string; end_at?: string };
  assert.ok('end_at' in resumed);
  assert.not.ok('ended_at' in resumed);
  assert.is(resumed.end_at, iso(at(150)));
  // Sold meanwhile (a booking from 105): refused, naming the table.
  const sold = evolveCapacity(state, seat('2', 105, 90, ['t1']));
  try {
    decideResume(sold, 'r1', new Date(at(110)));
    assert.unreachable();
  } catch (err) {
    assert.ok(err instanceof BusinessRuleError);
    assert.is(err.reason, 'NO_TABLE');
    assert.equal((err.details as { table_ids: string[] }).table_ids, ['t1']);
  }
  // After the seating's planned end nothing can be in its way.
  assert.is(decideResume(sold, 'r1', new Date(at(150)))[0]?.type, 'SeatingHeld');
});

test('a later end never overwrites an earlier one, unless the seating was held again in between', () => {
  const seat = recorded({
    kind: 'hold',
    id: 1,
    start: 60,
    length: 90,
    tables: ['t1'],
    party: 2,
    shift: 'dinner',
  });
  const apply = (
    state: CapacityState,
    events: { type: string; data: Record<string, unknown> }[],
    pos: bigint,
  ) =>
    events.reduce(
      (s, e, i) => evolveCapacity(s, { ...seat, ...e, position: pos + BigInt(i) } as RecordedEvent),
      state,
    );
  let state = [seat].reduce(evolveCapacity, initialCapacity);
  state = apply(state, decideEnd(state, 'r1', iso(at(80)), 'NO_SHOW', 'now'), 900n);
  assert.is(state.held.get('r1')?.ended_at, iso(at(80)));
  // Before: a SeatingEnded at 120, holding t1 again from 80 to 120 (sold meanwhile perhaps).
  assert.equal(decideEnd(state, 'r1', iso(at(120)), 'DONE', 'later'), [], 'the earlier end stands');
  assert.ok(occupancyExcept(state, 'x').isFree('t1', at(80), at(150)));
  // An earlier one still frees more.
  assert.is(decideEnd(state, 'r1', iso(at(70)), 'DONE', 'x')[0]?.type, 'SeatingEnded');
  // Held again (a resumed no-show): its next end, later than the first, is written.
  state = apply(state, decideHoldAgain(state, 'r1', new Date(at(90))), 910n);
  assert.is(state.held.get('r1')?.ended_at, undefined);
  const [ended] = decideEnd(state, 'r1', iso(at(120)), 'DONE', 'later');
  assert.is((ended?.data as { ended_at?: string } | undefined)?.ended_at, iso(at(120)));
});

test.run();
