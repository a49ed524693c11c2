// Positions another thread of this process wrote to the log for appends it settles itself (a CSV
// import's thread, src/customer-import/import-thread.ts), published in shared memory so that the
// main thread's SqliteEventStore.unsettled() can tell them from another process's commits without
// waiting for a message: a request then does not wait for the read models to take in the import's
// last slice, exactly as when the import ran on the main thread.
//
// Layout (BigInt64Array): [0] how many ranges were ever published, then SLOTS pairs (first, last),
// range n in slot n % SLOTS. The writer fills the slot, then bumps the count; a reader that finds
// the count moved more than SLOTS past what it read, or moved while it read, cannot know what it
// missed and says so (null): the caller then treats the log as unsettled (a wait it did not need; safe).

/** A range a group commit: a few seconds of a busy import's groups between two looks (64 KB). */
const SLOTS = 4096;

export class SettledRing {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: BigInt64Array;
  private readonly slots: bigint;
  /** Ranges read so far (reader side). */
  private seen = 0n;

  /** A new ring (`slots` ranges), or the other side of `buffer`'s. */
  constructor(buffer?: SharedArrayBuffer, slots = SLOTS) {
    this.buffer = buffer ?? new SharedArrayBuffer((1 + 2 * slots) * 8);
    this.cells = new BigInt64Array(this.buffer);
    this.slots = BigInt((this.cells.length - 1) / 2);
  }

  /** Writer side: positions first..last are written and settled by their writer. */
  publish(first: number, last: number): void {
    const n = Atomics.load(this.cells, 0);
    const slot = 1 + 2 * Number(n % this.slots);
    Atomics.store(this.cells, slot, BigInt(first));
    Atomics.store(this.cells, slot + 1, BigInt(last));
    Atomics.store(this.cells, 0, n + 1n);
  }

  /** Reader side: the ranges published since the last call, or null when some were missed. */
  take(): [number, number][] | null {
    const from = this.seen;
    const count = Atomics.load(this.cells, 0);
    if (count === from) return [];
    this.seen = count;
    const out: [number, number][] = [];
    for (let n = from; n < count; n++) {
      const slot = 1 + 2 * Number(n % this.slots);
      out.push([Number(Atomics.load(this.cells, slot)), Number(Atomics.load(this.cells, slot + 1))]);
    }
    // A slot read may have been refilled meanwhile (the writer lapped the ring): unknown then.
    if (Atomics.load(this.cells, 0) - from >= this.slots) return null;
    return out;
  }
}
