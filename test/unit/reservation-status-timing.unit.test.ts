// The one timing rule of the status changes that say the guests are there, gone or never came
// (status-timing.ts), and the status decisions that apply it (decide-status.ts).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  assertArrivalNotTooEarly,
  decideStatusOperation,
  type StatusOperation,
} from '../../commands/reservations/decide-status';
import type { ReservationSnapshot, ReservationStatus } from '../../commands/reservations/events';
import { SEATED_STATUSES } from '../../commands/reservations/evolve';
import {
  ARRIVAL_LEAD_MINUTES,
  earliestAt,
  type ReservationTimes,
  type TimedChange,
  timingRefusal,
} from '../../commands/reservations/status-timing';
import { ApiError } from '../../src/core/errors';

const MINUTE = 60_000;
const LEAD = ARRIVAL_LEAD_MINUTES * MINUTE;

const STATUSES: ReservationStatus[] = [
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
  'SHOWED_UP',
  'SEATED',
  'PARTIALLY_SEATED',
  'SEATED_FOR_DRINKS',
  'DONE',
  'NO_SHOW',
  'REJECTED',
  'CANCELED_BY_CUSTOMER',
  'CANCELED_BY_RESTAURANT',
];

/** An instant in 2020–2030 written with a whole-quarter-hour offset, as reservations carry them. */
const instant = fc
  .tuple(
    fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }),
    fc.integer({ min: -48, max: 56 }),
  )
  .map(([ms, quarters]) => {
    const offset = quarters * 15;
    const local = new Date(ms + offset * MINUTE).toISOString().slice(0, 19);
    const sign = offset < 0 ? '-' : '+';
    const abs = Math.abs(offset);
    return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  });

/** Around the start: days before to days after, to the millisecond near the edges too. */
const offsetFromStart = fc.oneof(
  fc.integer({ min: -5 * 24 * 60 * MINUTE, max: 5 * 24 * 60 * MINUTE }),
  fc.integer({ min: -LEAD - 2, max: -LEAD + 2 }),
  fc.integer({ min: -2, max: 2 }),
);

/** A change for a reservation starting at the given instant (a finish ends 0 to 24 hours after it). */
const change: fc.Arbitrary<(startAt: string) => TimedChange> = fc.oneof(
  fc.constantFrom(...SEATED_STATUSES).map((to) => () => ({ kind: 'arrive' as const, to })),
  fc.constant(() => ({ kind: 'leave' as const })),
  fc.integer({ min: 0, max: 24 * 60 }).map((m) => (startAt: string) => ({
    kind: 'finish' as const,
    endAt: new Date(Date.parse(startAt) + m * MINUTE).toISOString(),
  })),
  fc
    .integer({ min: -120, max: 240 })
    .map((graceMinutes) => () => ({ kind: 'no_show' as const, graceMinutes })),
);

/** Where a reservation has one, when its guests were seated: anywhere around its start (days early too). */
const seatedAt = (start_at: string): fc.Arbitrary<string | null> =>
  fc.option(offsetFromStart.map((off) => new Date(Date.parse(start_at) + off).toISOString()));

const timesAround = instant.chain((start_at) =>
  seatedAt(start_at).map((seated_at): ReservationTimes => ({ start_at, seated_at })),
);

test('a change is refused exactly before its earliest instant, and never again once allowed', () => {
  fc.assert(
    fc.property(
      change,
      timesAround,
      offsetFromStart,
      fc.nat(10 * 24 * 60 * MINUTE),
      (c0, times, off, later) => {
        const c = c0(times.start_at);
        const earliest = earliestAt(c, times);
        const now = new Date(Date.parse(times.start_at) + off);
        const refusal = timingRefusal(c, times, now);
        assert.is(refusal === null, now.getTime() >= earliest);
        if (refusal) {
          assert.is(refusal.status, 422);
          assert.is(refusal.details?.earliest_at, new Date(earliest).toISOString());
          assert.is(refusal.details?.start_at, times.start_at);
        } else assert.is(timingRefusal(c, times, new Date(now.getTime() + later)), null);
      },
    ),
  );
});

test('the windows: guests there from 120 minutes before the start, gone from their seating (else the same); no-show never before it; finish at the end', () => {
  fc.assert(
    fc.property(change, timesAround, (c0, times) => {
      const { start_at, seated_at } = times;
      const c = c0(start_at);
      const start = Date.parse(start_at);
      const earliest = earliestAt(c, times);
      if (c.kind === 'arrive') assert.is(earliest, start - LEAD);
      if (c.kind === 'leave') assert.is(earliest, seated_at ? Date.parse(seated_at) : start - LEAD);
      if (c.kind === 'no_show') assert.ok(earliest >= start, 'a no-show before its start');
      if (c.kind === 'no_show') assert.is(earliest, start + Math.max(0, c.graceMinutes) * MINUTE);
      if (c.kind === 'finish') assert.is(earliest, Date.parse(c.endAt));
    }),
  );
});

test('each refusal names what it refuses', () => {
  const start_at = '2026-06-03T19:00:00+02:00';
  const early = new Date('2026-06-01T09:00:00Z');
  const reason = (c: TimedChange) => timingRefusal(c, { start_at }, early)?.details?.reason;
  assert.is(reason({ kind: 'arrive', to: 'SEATED' }), 'TOO_EARLY_TO_ARRIVE');
  assert.is(reason({ kind: 'leave' }), 'TOO_EARLY_TO_LEAVE');
  assert.is(reason({ kind: 'finish', endAt: '2026-06-03T20:30:00+02:00' }), 'NOT_FINISHED_YET');
  assert.is(reason({ kind: 'no_show', graceMinutes: 30 }), 'GRACE_PERIOD_RUNNING');
  const message = timingRefusal({ kind: 'arrive', to: 'SEATED' }, { start_at }, early)?.message ?? '';
  assert.match(message, 'the guests cannot be SEATED yet');
  assert.match(message, '2026-06-03T15:00:00.000Z');
});

const snapshot = (
  status: ReservationStatus,
  start_at: string,
  seated_at: string | null = null,
): ReservationSnapshot =>
  ({
    reservation_id: 'res_1',
    restaurant_id: 'rest_1',
    status,
    start_at,
    end_at: new Date(Date.parse(start_at) + 90 * MINUTE).toISOString(),
    seated_at,
    payments: [],
    locked_fields: [],
  }) as unknown as ReservationSnapshot;

const operation: fc.Arbitrary<StatusOperation> = fc.oneof(
  fc.constantFrom<StatusOperation>(
    { kind: 'approve' },
    { kind: 'reject', reason: null },
    { kind: 'seat' },
    { kind: 'partially_seat' },
    { kind: 'leave' },
    { kind: 'cancel_by_staff', reason: null },
    { kind: 'cancel_by_customer', reason: null },
    { kind: 'finish' },
  ),
  fc.integer({ min: 0, max: 240 }).map((graceMinutes) => ({ kind: 'no_show' as const, graceMinutes })),
);

/** Written out from RESERVATIONS.md's table, apart from the code: where each operation moves from. */
const AWAITING: ReservationStatus[] = [
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
];
/** "Canceled" there: a REJECTED reservation may still be canceled by staff. */
const CANCELED: ReservationStatus[] = ['CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT'];
const MOVES: Record<StatusOperation['kind'], { from: ReservationStatus[]; to: ReservationStatus }> = {
  approve: { from: ['PENDING'], to: 'CONFIRMED' },
  reject: { from: ['PENDING'], to: 'REJECTED' },
  seat: {
    from: ['PENDING', ...AWAITING, 'SHOWED_UP', 'PARTIALLY_SEATED', 'SEATED_FOR_DRINKS', 'NO_SHOW'],
    to: 'SEATED',
  },
  partially_seat: {
    from: ['PENDING', ...AWAITING, 'SHOWED_UP', 'SEATED_FOR_DRINKS', 'NO_SHOW'],
    to: 'PARTIALLY_SEATED',
  },
  leave: { from: ['SHOWED_UP', 'SEATED', 'PARTIALLY_SEATED', 'SEATED_FOR_DRINKS'], to: 'DONE' },
  cancel_by_staff: {
    from: STATUSES.filter((s) => !CANCELED.includes(s)),
    to: 'CANCELED_BY_RESTAURANT',
  },
  cancel_by_customer: { from: ['PENDING', ...AWAITING], to: 'CANCELED_BY_CUSTOMER' },
  finish: { from: ['SHOWED_UP', 'SEATED', 'PARTIALLY_SEATED', 'SEATED_FOR_DRINKS'], to: 'DONE' },
  no_show: { from: AWAITING, to: 'NO_SHOW' },
};

const TIMING_REASONS = [
  'TOO_EARLY_TO_ARRIVE',
  'TOO_EARLY_TO_LEAVE',
  'NOT_FINISHED_YET',
  'GRACE_PERIOD_RUNNING',
];

/** The first instant the operation's change may be recorded at, worked out here on its own. */
function earliestFor(op: StatusOperation, r: ReservationSnapshot): number {
  const start = Date.parse(r.start_at);
  switch (op.kind) {
    case 'seat':
    case 'partially_seat':
      return start - LEAD;
    case 'leave':
      return r.seated_at ? Date.parse(r.seated_at) : start - LEAD;
    case 'finish':
      return Date.parse(r.end_at);
    case 'no_show':
      return start + op.graceMinutes * MINUTE;
    default:
      return Number.NEGATIVE_INFINITY;
  }
}

test('a status decision moves exactly when its status and its time allow it, and is refused for the right reason', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...STATUSES),
      operation,
      timesAround,
      offsetFromStart,
      (status, op, { start_at, seated_at }, off) => {
        const r = snapshot(status, start_at, seated_at);
        const now = new Date(Date.parse(start_at) + off);
        const move = MOVES[op.kind];
        const statusAllows = move.from.includes(status) && status !== move.to;
        const inTime = now.getTime() >= earliestFor(op, r);
        let events: ReturnType<typeof decideStatusOperation>;
        try {
          events = decideStatusOperation(r, op, now);
        } catch (err) {
          assert.instance(err, ApiError);
          const reason = (err as ApiError).details?.reason as string;
          // Over-refusal: a move whose time has come is never refused for its time.
          if (inTime) assert.not.ok(TIMING_REASONS.includes(reason), `${op.kind} from ${status}: ${reason}`);
          assert.not.ok(statusAllows && inTime, `${op.kind} from ${status} refused: ${reason}`);
          if (statusAllows)
            assert.ok(TIMING_REASONS.includes(reason), `${op.kind} from ${status}: ${reason}`);
          return;
        }
        if (statusAllows && inTime) assert.is(events.length, 1, `${op.kind} from ${status}`);
        else assert.is(events.length, 0, `${op.kind} from ${status} at ${off}: a move the rules forbid`);
        for (const e of events) assert.is(e.data.to, move.to);
      },
    ),
    { numRuns: 2000 },
  );
});

test('staff seating is refused with the same answer as a creation in that status', () => {
  fc.assert(
    fc.property(instant, offsetFromStart, (start_at, off) => {
      const now = new Date(Date.parse(start_at) + off);
      const viaCreate = attempt(() => assertArrivalNotTooEarly(start_at, 'SEATED', now));
      const viaStaff = attempt(() =>
        decideStatusOperation(snapshot('CONFIRMED', start_at), { kind: 'seat' }, now),
      );
      assert.equal(viaStaff, viaCreate);
    }),
  );
});

function attempt(fn: () => unknown): unknown {
  try {
    fn();
    return null;
  } catch (err) {
    return err instanceof ApiError ? { message: err.message, details: err.details } : err;
  }
}

test.run();
