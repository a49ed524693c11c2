// Restaurant-side reservation operations for operators (the staff dashboard and the POS are other
// systems; these are the commands they would call). Each one is an ordinary command.
import type { StatusOperation } from '../../commands/reservations/decide-status';
import { LOCKABLE_FIELDS, type LockableField } from '../../commands/reservations/decide-update';
import { loadReservation } from '../../commands/reservations/handler-common';
import {
  assignWaiter,
  recordFeedback,
  recordPayment,
  setPosLock,
} from '../../commands/reservations/handler-records';
import { changeStatus } from '../../commands/reservations/handler-status';
import {
  type BackfillOutcome,
  backfillNightSeatings,
} from '../../commands/reservations/night-seatings-backfill';
import { PAYMENT_STATUSES, type PaymentStatus } from '../../commands/reservations/payments';
import { ARRIVAL_LEAD_MINUTES } from '../../commands/reservations/status-timing';
import { loadRestaurant } from '../../commands/restaurants/handler';
import { operatorMeta } from '../core/command-meta';
import { newId } from '../core/ids';
import {
  finishSeatedReservations,
  markNoShows,
  repairSeatings,
  reservationJobSettings,
} from '../jobs/reservation-jobs';
import { type CliContext, CliUsageError, optionalFlag, registerCliCommand, requireFlag } from './registry';
import { restaurantFlag } from './restaurant-flag';

const NIGHT_OUTCOMES: Record<BackfillOutcome, string> = {
  ALREADY_KNOWN:
    'already known: tracked since its creation, or a seating past midnight recorded; nothing written',
  TRACKED:
    'tracked: no seating ever crossed midnight; bookings read no neighbouring day until one does (API processes started from now on)',
  CROSSED:
    'crossed: a seating crossed midnight or the time zone changed; recorded, bookings keep reading the neighbouring days',
};

const meta = operatorMeta('cli');

async function done(
  ctx: CliContext,
  outcome: { position: bigint | null; appended?: unknown[] },
  what: string,
) {
  await ctx.rt.settle(outcome.position);
  ctx.out(outcome.position === null ? `reservation unchanged (${what} already)` : `reservation ${what}`);
}

function status(name: string, summary: string, op: (ctx: CliContext) => StatusOperation, what: string) {
  const withReason = name.startsWith('reject') || name.startsWith('cancel');
  registerCliCommand({
    name: `reservations ${name}`,
    summary,
    usage: `--id res_x${withReason ? ' [--reason "…"]' : ''}`,
    flags: withReason ? ['id', 'reason'] : ['id'],
    async run(ctx) {
      const out = await changeStatus(ctx.rt, null, requireFlag(ctx, 'id'), op(ctx), meta);
      await done(ctx, out, what);
    },
  });
}

const reason = (ctx: CliContext) => optionalFlag(ctx, 'reason') ?? null;

function intFlag(ctx: CliContext, name: string): number | undefined {
  const v = optionalFlag(ctx, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new CliUsageError(`--${name} must be an integer`);
  return Number(v);
}

export function registerReservationCommands(): void {
  status('approve', 'Approve a PENDING reservation', () => ({ kind: 'approve' }), 'approved');
  status(
    'reject',
    'Reject a PENDING reservation (frees its table)',
    (c) => ({ kind: 'reject', reason: reason(c) }),
    'rejected',
  );
  status(
    'seat',
    `Seat the guests, from ${ARRIVAL_LEAD_MINUTES} minutes before the start (a NO_SHOW: its table held again, refused when sold meanwhile)`,
    () => ({ kind: 'seat' }),
    'seated',
  );
  status(
    'partially-seat',
    `Seat part of the party, from ${ARRIVAL_LEAD_MINUTES} minutes before the start`,
    () => ({ kind: 'partially_seat' }),
    'partially seated',
  );
  status('leave', 'The guests left: DONE, their table free from now', () => ({ kind: 'leave' }), 'done');
  status(
    'cancel-by-staff',
    'Staff cancellation: CANCELED_BY_RESTAURANT (frees the table; ignores POS locks)',
    (c) => ({ kind: 'cancel_by_staff', reason: reason(c) }),
    'canceled',
  );
  status(
    'cancel-by-customer',
    'The guest canceled: CANCELED_BY_CUSTOMER (frees the table)',
    (c) => ({ kind: 'cancel_by_customer', reason: reason(c) }),
    'canceled',
  );

  registerCliCommand({
    name: 'reservations lock',
    summary: 'Set the POS service lock: the fields the partner API may no longer change (--clear lifts it)',
    usage: `--id res_x (--fields ${LOCKABLE_FIELDS.slice(0, 3).join(',')},…|all | --clear)`,
    flags: ['id', 'fields', 'clear'],
    async run(ctx) {
      const raw = ctx.flags.clear === true ? '' : requireFlag(ctx, 'fields');
      const fields = raw === 'all' ? [...LOCKABLE_FIELDS] : raw.split(',').filter(Boolean);
      const unknown = fields.filter((f) => !(LOCKABLE_FIELDS as readonly string[]).includes(f));
      if (unknown.length)
        throw new CliUsageError(
          `unknown field(s) ${unknown.join(', ')}; lockable: ${LOCKABLE_FIELDS.join(', ')}`,
        );
      const out = await setPosLock(ctx.rt, null, requireFlag(ctx, 'id'), fields as LockableField[], meta);
      await done(ctx, out, fields.length ? `locked (${fields.join(', ')})` : 'unlocked');
    },
  });

  registerCliCommand({
    name: 'reservations feedback',
    summary: "Record the guest's feedback (rating 1-5, comment) or the restaurant's answer",
    usage: '--id res_x [--rating 4] [--comment "…"] [--answer "…"]',
    flags: ['id', 'rating', 'comment', 'answer'],
    async run(ctx) {
      const out = await recordFeedback(
        ctx.rt,
        null,
        requireFlag(ctx, 'id'),
        {
          rating: intFlag(ctx, 'rating'),
          comment: optionalFlag(ctx, 'comment'),
          answer: optionalFlag(ctx, 'answer'),
        },
        meta,
      );
      await done(ctx, out, 'feedback recorded');
    },
  });

  registerCliCommand({
    name: 'reservations payment',
    summary: 'Record a payment, or a new status of one (e.g. a deposit paid); nothing is charged',
    usage: `--id res_x --status ${PAYMENT_STATUSES.join('|')} [--payment-id pay_x] [--amount 2000] [--type DEPOSIT] [--mode …] [--provider …]`,
    flags: ['id', 'status', 'payment-id', 'amount', 'type', 'mode', 'provider'],
    async run(ctx) {
      const id = requireFlag(ctx, 'id');
      const status = requireFlag(ctx, 'status').toUpperCase();
      if (!(PAYMENT_STATUSES as readonly string[]).includes(status))
        throw new CliUsageError(`--status must be one of ${PAYMENT_STATUSES.join(', ')}`);
      const reservation = (await loadReservation(ctx.rt, id)).r;
      const restaurant = reservation ? await loadRestaurant(ctx.rt, reservation.restaurant_id) : null;
      const out = await recordPayment(
        ctx.rt,
        null,
        id,
        {
          paymentId: optionalFlag(ctx, 'payment-id') ?? newId('pay'),
          status: status as PaymentStatus,
          amount: intFlag(ctx, 'amount'),
          paymentType: optionalFlag(ctx, 'type'),
          paymentMode: optionalFlag(ctx, 'mode'),
          provider: optionalFlag(ctx, 'provider'),
        },
        restaurant?.profile?.currency ?? 'EUR',
        meta,
      );
      await done(ctx, out, 'payment recorded');
    },
  });

  registerCliCommand({
    name: 'reservations waiter',
    summary: 'Assign the waiter serving the reservation (--clear removes it)',
    usage: '--id res_x (--waiter-id w_1 --waiter-name "Ana" | --clear)',
    flags: ['id', 'waiter-id', 'waiter-name', 'clear'],
    async run(ctx) {
      const waiter =
        ctx.flags.clear === true
          ? null
          : { id: requireFlag(ctx, 'waiter-id'), name: requireFlag(ctx, 'waiter-name') };
      const out = await assignWaiter(ctx.rt, null, requireFlag(ctx, 'id'), waiter, meta);
      await done(ctx, out, waiter ? `served by ${waiter.name}` : 'without waiter');
    },
  });

  registerCliCommand({
    name: 'reservations show',
    summary: 'Print a reservation as the write side holds it (JSON)',
    usage: '--id res_x',
    flags: ['id'],
    async run(ctx) {
      const state = await loadReservation(ctx.rt, requireFlag(ctx, 'id'));
      if (!state.r) throw new CliUsageError('no such reservation');
      ctx.out(JSON.stringify(state.r, null, 2));
    },
  });

  registerCliCommand({
    name: 'reservations track-night-seatings',
    summary:
      'Start tracking seatings past midnight for a restaurant created before the tracking existed (reads its whole history once)',
    usage: '--restaurant rest_x',
    flags: ['restaurant'],
    async run(ctx) {
      const restaurantId = await restaurantFlag(ctx);
      const outcome = await backfillNightSeatings(
        ctx.rt.events,
        restaurantId,
        operatorMeta('night-seatings-backfill'),
        ctx.rt.clock.now().toISOString(),
      );
      ctx.out(NIGHT_OUTCOMES[outcome]);
    },
  });

  registerCliCommand({
    name: 'reservations run-jobs',
    summary: 'Run the scheduler jobs now: finished, no-shows, seating repair',
    usage: '',
    flags: [],
    async run(ctx) {
      const settings = reservationJobSettings(process.env);
      const finished = await finishSeatedReservations(ctx.rt);
      const noShows = await markNoShows(ctx.rt, settings.noShowGraceMinutes);
      const repaired = await repairSeatings(ctx.rt, settings.repairAfterMinutes);
      ctx.out(
        `finished ${finished.changed.length}, no-show ${noShows.changed.length}, seatings repaired ${repaired.changed.length}`,
      );
    },
  });
}
