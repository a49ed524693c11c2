// From when a status change may be recorded, read on the reservation's own times. Pure.
// One rule for every path that says the guests are there, have left or never came: a creation in
// an arrived status (the partner's `initial_status`), staff seating and leave (the CLI, which the
// dashboard and the POS would call), the scheduler's finish and no-show. A status records a fact
// about the guests at `now`: guests cannot be at a reservation's table days before it starts.
import { BusinessRuleError } from '../../src/core/errors';
import type { ReservationStatus } from './events';

/**
 * How long before its start guests may be recorded as there (SHOWED_UP or a seated status): early
 * for a drink at the bar, a table ready sooner. Further ahead they cannot be there for this
 * reservation (its `seated_at` would be days before its start): 422 `TOO_EARLY_TO_ARRIVE`.
 */
export const ARRIVAL_LEAD_MINUTES = 120;

/** What a status change says about the guests, which decides from when it may be recorded. */
export type TimedChange =
  /** Arrived (SHOWED_UP) or seated, in any seated status: on creation or by staff. */
  | { kind: 'arrive'; to: ReservationStatus }
  /**
   * Staff: the guests left (DONE). They were there, so not before they were recorded at the table
   * (`seated_at`) or, when that is not recorded (SHOWED_UP), not before they could arrive.
   */
  | { kind: 'leave' }
  /** Scheduler: DONE once the seating's planned end (`end_at`) has passed. */
  | { kind: 'finish'; endAt: string }
  /** Scheduler: nobody came within the grace period after the start (never before the start). */
  | { kind: 'no_show'; graceMinutes: number };

export interface ReservationTimes {
  start_at: string;
  /**
   * When the guests were recorded at the table. A leave may follow it at any time, even one seated
   * days early by a version without the arrival window: refusing it would leave staff no true move.
   */
  seated_at?: string | null;
}

/** The first instant (ms) the change may be recorded at; no latest one (a late arrival is still one). */
export function earliestAt(change: TimedChange, times: ReservationTimes): number {
  const start = Date.parse(times.start_at);
  switch (change.kind) {
    case 'arrive':
      return start - ARRIVAL_LEAD_MINUTES * 60_000;
    case 'leave':
      return times.seated_at ? Date.parse(times.seated_at) : start - ARRIVAL_LEAD_MINUTES * 60_000;
    case 'finish':
      return Date.parse(change.endAt);
    case 'no_show':
      return start + Math.max(0, change.graceMinutes) * 60_000;
  }
}

/** The 422 refusing `change` at `now`, or null when it may be recorded. */
export function timingRefusal(
  change: TimedChange,
  times: ReservationTimes,
  now: Date,
): BusinessRuleError | null {
  const earliest = earliestAt(change, times);
  if (now.getTime() >= earliest) return null;
  const earliestIso = new Date(earliest).toISOString();
  const details = { start_at: times.start_at, earliest_at: earliestIso };
  switch (change.kind) {
    case 'arrive':
      return new BusinessRuleError(
        'TOO_EARLY_TO_ARRIVE',
        `the guests cannot be ${change.to} yet: the reservation starts at ${times.start_at}, and guests may be recorded as arrived from ${ARRIVAL_LEAD_MINUTES} minutes before its start (${earliestIso})`,
        { status: change.to, ...details },
      );
    case 'leave':
      return times.seated_at
        ? new BusinessRuleError(
            'TOO_EARLY_TO_LEAVE',
            `the guests cannot have left yet: they were seated at ${times.seated_at} (the reservation starts at ${times.start_at})`,
            { status: 'DONE', ...details, seated_at: times.seated_at },
          )
        : new BusinessRuleError(
            'TOO_EARLY_TO_LEAVE',
            `the guests cannot have left yet: the reservation starts at ${times.start_at}, and guests may be recorded as there, or gone, from ${ARRIVAL_LEAD_MINUTES} minutes before its start (${earliestIso})`,
            { status: 'DONE', ...details },
          );
    case 'finish':
      return new BusinessRuleError(
        'NOT_FINISHED_YET',
        `the seating has not reached its end (${change.endAt})`,
        { status: 'DONE', ...details, end_at: change.endAt },
      );
    case 'no_show':
      return new BusinessRuleError(
        'GRACE_PERIOD_RUNNING',
        `the guests may still arrive: the reservation starts at ${times.start_at}, and it becomes a no-show from ${earliestIso}`,
        { status: 'NO_SHOW', ...details },
      );
  }
}

export function assertTiming(change: TimedChange, times: ReservationTimes, now: Date): void {
  const refusal = timingRefusal(change, times, now);
  if (refusal) throw refusal;
}
