// rate-limiter-flexible ends its windows on Date.now() and takes no clock. The service's clock may not
// be that one (TEST_CLOCK moves it forward; tests freeze it), and what the limits answer is in the
// service's time (x-ratelimit-reset, retry-after): a test that moved the clock past a reset found the
// budget still spent for a real minute. Under such a clock each window ends at the service clock's
// time too, whichever comes first. On the system clock the library's limiter is used as it is.
import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { trimOldest } from '../core/bounded-map';
import { type Clock, systemClock } from '../core/clock';

/** What the service asks of a limiter (the partner routes', the token endpoint's, sign-in's). */
export type Limiter = Pick<RateLimiterAbstract, 'consume' | 'get' | 'delete'>;

/**
 * Windows remembered at most (only under a clock of its own: tests, on loopback). Past it the oldest
 * still running are forgotten: each then ends on the library's time, as another process's window does.
 */
const MAX_WINDOWS = 10_000;

/**
 * `inner` with its windows (its own duration) ended on `clock` as well: `inner` itself when that is the
 * system clock.
 */
export function onServiceClock(inner: RateLimiterAbstract, clock: Clock): Limiter {
  return clock === systemClock ? inner : new ClockedLimiter(inner, clock, inner.duration * 1000);
}

/**
 * Remembers, per key, when its window began on the service clock (the library says a consume began one:
 * isFirstInDuration), and starts a new one once the service clock is past its end. A window another
 * process began (scaled out, in MongoDB) is not known here: it ends on the library's time.
 */
export class ClockedLimiter implements Limiter {
  /** When each key's window began on the clock, the earliest first (a new window is set last). */
  private readonly started = new Map<string, number>();
  /** Each key's delete in flight (at most one: a later one replaces it), for its consumes to wait for. */
  private readonly resets = new Map<string, Promise<boolean>>();

  constructor(
    private readonly inner: RateLimiterAbstract,
    private readonly clock: Clock,
    private readonly durationMs: number,
    private readonly maxWindows = MAX_WINDOWS,
  ) {}

  /** How many windows are remembered (bounded by maxWindows). */
  get windowsKept(): number {
    return this.started.size;
  }

  async consume(key: string | number, points?: number): Promise<RateLimiterRes> {
    const now = this.clock.now().getTime();
    // A consume that comes while the window is being deleted waits for that: else it would draw from
    // the old window (in MongoDB, its document), which the delete then wipes.
    const reset = this.resets.get(String(key)) ?? (this.ended(String(key), now) ? this.delete(key) : null);
    if (reset) await reset;
    try {
      return this.onClock(String(key), await this.inner.consume(key, points), now);
    } catch (err) {
      // Refused (the budget spent): its answer on the clock too. A store's error as it is.
      throw err instanceof RateLimiterRes ? this.onClock(String(key), err, now) : err;
    }
  }

  async get(key: string | number): Promise<RateLimiterRes | null> {
    await this.resets.get(String(key));
    const now = this.clock.now().getTime();
    if (this.ended(String(key), now)) return null;
    const res = await this.inner.get(key);
    return res && this.onClock(String(key), res, now);
  }

  delete(key: string | number): Promise<boolean> {
    const k = String(key);
    this.started.delete(k);
    const deleted: Promise<boolean> = this.inner.delete(key).finally(() => {
      if (this.resets.get(k) === deleted) this.resets.delete(k);
    });
    this.resets.set(k, deleted);
    return deleted;
  }

  private ended(key: string, now: number): boolean {
    const start = this.started.get(key);
    return start !== undefined && now >= start + this.durationMs;
  }

  /**
   * The answer with the time left in its window on the service clock. A clock slower than real time
   * (frozen in a test) may see the library end the window first: the reset said is then later than
   * the budget's, never earlier (a client told to wait is never refused for coming at that time).
   */
  private onClock(key: string, res: RateLimiterRes, now: number): RateLimiterRes {
    if (res.isFirstInDuration) {
      this.started.delete(key);
      if (this.started.size >= this.maxWindows)
        for (const [k, start] of this.started) if (now >= start + this.durationMs) this.started.delete(k);
      this.started.set(key, now);
      // Still full of running windows: the earliest go (a 32nd at a time, so the sweep above runs once
      // in that many new windows, not on each).
      trimOldest(this.started, this.maxWindows);
    }
    const start = this.started.get(key);
    if (start === undefined) return res;
    const left = Math.max(0, start + this.durationMs - now);
    return new ClockedRes(
      res.remainingPoints,
      left,
      res.consumedPoints,
      res.isFirstInDuration,
      start + this.durationMs,
    );
  }
}

/**
 * An answer that knows its window's end on the service clock: `x-ratelimit-reset` is that instant, not
 * the clock read again plus `msBeforeNext` (a clock that moves with real time gave two refusals of one
 * window resets some milliseconds apart).
 */
export class ClockedRes extends RateLimiterRes {
  constructor(
    remainingPoints: number,
    msBeforeNext: number,
    consumedPoints: number,
    isFirstInDuration: boolean,
    readonly resetAt: number,
  ) {
    super(remainingPoints, msBeforeNext, consumedPoints, isFirstInDuration);
  }
}
