// The one way code reads time. Tests and TEST_CLOCK move it forward; nothing calls Date.now() directly.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that follows real time plus an offset an operator (or a test) can advance. */
export class AdjustableClock implements Clock {
  private offsetMs = 0;
  constructor(private readonly base: Clock = systemClock) {}
  now(): Date {
    return new Date(this.base.now().getTime() + this.offsetMs);
  }
  advance(seconds: number): Date {
    this.offsetMs += seconds * 1000;
    return this.now();
  }
}

/** A clock frozen at a given instant unless moved (unit tests). */
export class FixedClock implements Clock {
  private current: number;
  constructor(start: Date | string) {
    this.current = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(instant: Date | string): void {
    this.current = new Date(instant).getTime();
  }
  advance(seconds: number): Date {
    this.current += seconds * 1000;
    return this.now();
  }
}
