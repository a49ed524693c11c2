// Holds on keys within this process, each taken all at once: a taker waits, holding none of them,
// until every key it asks for is free, then holds them all. POST /customers, inline reservation
// customers and missed calls take their match keys this way (commands/customers/upsert.ts), and so
// does a CSV import for each slice of rows it matches, which takes more while it still holds those
// of its slices in flight (src/customer-import/match-key-hold.ts).
//
// Takers of a key have it in the order they asked: a taker waits while one of its keys is held, or
// while an earlier taker waits for it (parallel requests sharing keys by different fields end on one
// customer only in that order). A taker that holds keys while it takes more (the import) must not
// wait behind a waiter: a request waiting for a key the import holds, and for one the import asks for
// next, waited for the import, which waited for it. So such a taker (`past waiters`) waits only while
// a key is held; and since every other taker holds nothing while it waits, and a holder that is not
// the import finishes on its own, nothing waits in a circle, provided there is at most one such taker
// of a set of keys (one import per restaurant in this process: enforced by match-key-hold.ts; two
// would wait for each other's keys). (Keys taken one by one in a fixed order
// deadlocked there: a request holding A while waiting for B, held by the import waiting for A.)
//
// Correctness never depends on it (every append carries an expected revision): it keeps matching on
// a key in turn, so parallel requests for one new guest make one customer. So a request waits for its
// keys a bounded time (`run`'s limit): a stalled holder (an import whose thread or writer hangs) costs
// it the hold, and at worst a duplicate customer, never the answer.

interface Waiter {
  keys: readonly string[];
  pastWaiters: boolean;
  grant: () => void;
}

/** How long `run` waits for its keys, and what it tells when it goes ahead without them. */
export interface WaitLimit {
  ms: number;
  onGiveUp(keys: readonly string[]): void;
}

export class KeyHolds {
  private readonly held = new Set<string>();
  /** Per key, its takers waiting, oldest first. */
  private readonly waiting = new Map<string, Waiter[]>();

  /** How many keys are held (tests). */
  get size(): number {
    return this.held.size;
  }

  /**
   * Takes `keys` (distinct): null when they were all free and are now held, else a promise that
   * resolves once they are. The caller releases them (`release`). `pastWaiters`: a taker that holds
   * other keys meanwhile waits only while one of these is held, not behind earlier waiters.
   */
  take(keys: readonly string[], pastWaiters = false): Promise<void> | null {
    if (this.free(keys) && (pastWaiters || !keys.some((k) => this.waiting.has(k)))) {
      for (const k of keys) this.held.add(k);
      return null;
    }
    return new Promise<void>((grant) => {
      this.enqueue({ keys, pastWaiters, grant });
    });
  }

  /**
   * As `take` (not past waiters), but gives up after `ms`: resolves false then, holding none of
   * `keys` and no longer waiting for them (the takers behind it may have theirs at once).
   */
  takeWithin(keys: readonly string[], ms: number): Promise<boolean> | null {
    if (this.free(keys) && !keys.some((k) => this.waiting.has(k))) {
      for (const k of keys) this.held.add(k);
      return null;
    }
    return new Promise<boolean>((resolve) => {
      const w: Waiter = {
        keys,
        pastWaiters: false,
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.withdraw(w);
        resolve(false);
      }, ms);
      this.enqueue(w);
    });
  }

  /** Lets `keys` go (those held), handing them to the waiters that can now have all of theirs. */
  release(keys: readonly string[]): void {
    for (const k of keys) this.held.delete(k);
    for (const k of keys) {
      const list = this.waiting.get(k);
      if (!list) continue;
      for (const w of [...list]) if (this.grantable(w)) this.grant(w);
    }
  }

  /**
   * Runs `task` holding `keys` (distinct), once none is held by another; lets them go when it settles.
   * With `limit`, after `limit.ms` of waiting it runs `task` without them (and tells `onGiveUp`).
   */
  async run<T>(keys: readonly string[], task: () => Promise<T>, limit?: WaitLimit): Promise<T> {
    if (limit) {
      const taking = this.takeWithin(keys, limit.ms);
      if (taking && !(await taking)) {
        limit.onGiveUp(keys);
        return task();
      }
    } else {
      const taking = this.take(keys);
      if (taking) await taking;
    }
    try {
      return await task();
    } finally {
      this.release(keys);
    }
  }

  /** Whether a taker waits for a key `is` picks out. */
  waitedFor(is: (key: string) => boolean): boolean {
    for (const k of this.waiting.keys()) if (is(k)) return true;
    return false;
  }

  private enqueue(w: Waiter): void {
    for (const k of w.keys) {
      const list = this.waiting.get(k);
      if (list) list.push(w);
      else this.waiting.set(k, [w]);
    }
  }

  /** `w` stops waiting; those it was ahead of on its keys may now have all of theirs. */
  private withdraw(w: Waiter): void {
    for (const k of w.keys) this.unqueue(k, w);
    for (const k of w.keys) {
      const list = this.waiting.get(k);
      if (list) for (const x of [...list]) if (this.grantable(x)) this.grant(x);
    }
  }

  private unqueue(k: string, w: Waiter): void {
    const list = this.waiting.get(k);
    if (!list) return;
    const i = list.indexOf(w);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.waiting.delete(k);
  }

  private free(keys: readonly string[]): boolean {
    for (const k of keys) if (this.held.has(k)) return false;
    return true;
  }

  /** All of its keys free, and (unless it goes past waiters) no earlier waiter on any of them. */
  private grantable(w: Waiter): boolean {
    if (!this.free(w.keys)) return false;
    if (w.pastWaiters) return true;
    for (const k of w.keys) if (this.waiting.get(k)?.[0] !== w) return false;
    return true;
  }

  private grant(w: Waiter): void {
    for (const k of w.keys) {
      this.held.add(k);
      this.unqueue(k, w);
    }
    w.grant();
  }
}
