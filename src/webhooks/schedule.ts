// The published retry schedule and what each answer means (spec §6, docs/WEBHOOKS.md). Pure.

/** Seconds after the first attempt at which each attempt runs: 9 attempts over 4 h 5 min 35 s. */
export const RETRY_OFFSETS_SECONDS = [0, 5, 35, 335, 1_235, 3_035, 6_635, 10_235, 14_735] as const;
export const MAX_ATTEMPTS = RETRY_OFFSETS_SECONDS.length;

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
 * After attempt `attempt` (1-based) of a delivery first attempted at `firstAt`: the outcome, and when
 * the next attempt is due. A manual resend starts a fresh series (`seriesStart` = the resend's attempt).
 */
export function nextStep(
  result: AttemptResult,
  attempt: number,
  firstAt: Date,
  seriesStart = 1,
): { outcome: AttemptOutcome; nextAt: Date | null } {
  const kind = classifyAttempt(result);
  if (kind === 'success') return { outcome: 'succeeded', nextAt: null };
  const index = attempt - seriesStart + 1;
  if (kind === 'final' || index >= MAX_ATTEMPTS) return { outcome: 'failed', nextAt: null };
  const offset = RETRY_OFFSETS_SECONDS[index] as number;
  return { outcome: 'retry', nextAt: new Date(firstAt.getTime() + offset * 1000) };
}

/**
 * How long an attempt handed to a worker (the fan-out's first attempt, or a requested one) is left to
 * it before the sweeper asks again: longer than an attempt can take, so a live worker is never doubled.
 */
export const CLAIM_LEASE_SECONDS = 60;

/** Delivery history is kept (and shown) for 30 days (spec §6). */
export const HISTORY_DAYS = 30;
