// The published retry schedule and what each answer means (spec §6, docs/WEBHOOKS.md). Pure.

import { createHash } from 'node:crypto';

/** Seconds after the first attempt at which each attempt runs at the latest: 9 attempts over 4 h 5 min 35 s. */
export const RETRY_OFFSETS_SECONDS = [0, 5, 35, 335, 1_235, 3_035, 6_635, 10_235, 14_735] as const;
export const MAX_ATTEMPTS = RETRY_OFFSETS_SECONDS.length;

/**
 * Each retry comes up to this fraction of the wait before it earlier than its offset (JITTER_SHARE of
 * the 30 s between the 2nd and the 3rd: up to 6 s earlier). Without it, the deliveries a burst made
 * (a POS sync, the scheduler's no-shows) to an endpoint that is down all came due at the same moments
 * and met it together when it came back. Earlier, never later: the schedule stays within its offsets
 * (the last attempt between 3 h 50 min 35 s and 4 h 5 min 35 s, spec §6: 3 to 5 hours), and each
 * retry stays after the one before (the share is less than the wait).
 */
export const JITTER_SHARE = 0.2;

/**
 * Milliseconds after a series' first attempt at which its attempt number `index` (2 … MAX_ATTEMPTS)
 * runs: the offset, less a share of the wait before it derived from the delivery id and the index
 * (deterministic: every worker, a replay and the tests compute the same time; spread across deliveries).
 */
export function retryOffsetMs(deliveryId: string, index: number): number {
  const offset = RETRY_OFFSETS_SECONDS[index - 1];
  const before = RETRY_OFFSETS_SECONDS[index - 2];
  if (offset === undefined || before === undefined) throw new RangeError(`no retry number ${index}`);
  const unit = createHash('sha256').update(`${deliveryId}#${index}`).digest().readUInt32BE(0) / 2 ** 32;
  return offset * 1000 - Math.floor(unit * JITTER_SHARE * (offset - before) * 1000);
}

/** Per attempt: the whole exchange (connect, send, answer) must finish within this. */
export const ATTEMPT_TIMEOUT_MS = 12_000;

export type AttemptOutcome = 'succeeded' | 'retry' | 'failed';

export interface AttemptResult {
  /** HTTP status, or null when no answer came (network error, timeout, refused target). */
  status: number | null;
  /** Error class when there was no answer: timeout, network, blocked_target. */
  error: 'timeout' | 'network' | 'blocked_target' | null;
}

/** Retried: 5xx, 408, 429, network errors and timeouts. Final: 2xx (success), any other answer (3xx included: redirects are not followed), a refused target. */
export function classifyAttempt(result: AttemptResult): 'success' | 'retryable' | 'final' {
  const { status, error } = result;
  if (status === null) return error === 'blocked_target' ? 'final' : 'retryable';
  if (status >= 200 && status < 300) return 'success';
  if (status >= 500 || status === 408 || status === 429) return 'retryable';
  return 'final';
}

/**
 * After attempt `attempt` (1-based) of delivery `deliveryId` whose series was first attempted at
 * `firstAt`: the outcome, and when the next attempt is due (`retryOffsetMs`). A manual resend starts a
 * fresh series (`seriesStart` = the resend's attempt).
 */
export function nextStep(
  result: AttemptResult,
  attempt: number,
  firstAt: Date,
  deliveryId: string,
  seriesStart = 1,
): { outcome: AttemptOutcome; nextAt: Date | null } {
  const kind = classifyAttempt(result);
  if (kind === 'success') return { outcome: 'succeeded', nextAt: null };
  const index = attempt - seriesStart + 1;
  if (kind === 'final' || index >= MAX_ATTEMPTS) return { outcome: 'failed', nextAt: null };
  return { outcome: 'retry', nextAt: new Date(firstAt.getTime() + retryOffsetMs(deliveryId, index + 1)) };
}

/**
 * How long an attempt handed to a worker (the fan-out's first attempt, or a requested one) is left to
 * it before the sweeper asks again: longer than an attempt can take, so a live worker is never doubled.
 */
export const CLAIM_LEASE_SECONDS = 60;

/** Delivery history is kept (and shown) for 30 days (spec §6). */
export const HISTORY_DAYS = 30;
