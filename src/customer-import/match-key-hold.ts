// The match keys (external_id, phone, email) a CSV import holds in this process's queue of POST
// /customers, inline reservation customers and missed calls (`matchKeyHolds`,
// commands/customers/upsert.ts). Without them an import row and an API request for the same new
// guest each matched nothing at the same moment, and each created a customer.
//
// A slice's rows take their keys before they are matched, all at once (those the import holds
// already excepted), and a key is let go once no slice in flight holds it: once the read models have
// the slice that wrote it. So a request sharing a key waits for the imported customer and matches it,
// and a row sharing a key with a request in flight waits for that request's customer. A row matched
// but left for the next slice lets its keys go and takes them again when matched again.
//
// On the main thread (engine.ts runJob in-process) the keys are taken here; in the import's thread
// (import-thread.ts) they are named with the slice's match question and let go by message, and the
// main thread (thread-host.ts) takes and lets go of them, where the queue lives.
//
// A key is the import's only once the queue has granted it (here, or the main thread's answer): the
// queue has no owners, so letting go of a key still being taken would let go of the request holding
// it, and a grant that arrives after the job ended would be held forever; it is let go at once.
//
// It takes them past waiters (key-holds.ts), and that is free of waiting in a circle only while at
// most one such taker holds keys of a restaurant in this process: two imports of one restaurant, each
// holding a key the other asks for, would each wait for the other, never letting go. The import slot
// (commands/customer-import/slot.ts) runs one job per restaurant at a time; `PastWaitersTaker` makes
// sure of it here, and refuses a second (the job fails) rather than risk a hang.
import { heldMatchKey, matchKeyHolds } from '../../commands/customers/upsert';

/** Restaurants whose import takes match keys past waiters in this process (at most one each). */
const takers = new Set<string>();

/**
 * An import's taking of its restaurant's match keys in this process's queue, past waiters: the one
 * taker of that restaurant (its first take throws if there is another) until `done`.
 */
class PastWaitersTaker {
  private registered = false;

  constructor(private readonly restaurantId: string) {}

  /** Takes `keys` (the import's spelling): as the queue holds them, and null when taken at once. */
  take(keys: readonly string[]): { held: string[]; taking: Promise<void> | null } {
    if (!this.registered) {
      if (takers.has(this.restaurantId))
        throw new Error(
          'a second CSV import of one restaurant took match keys in this process: it would wait in a circle with the first',
        );
      takers.add(this.restaurantId);
      this.registered = true;
    }
    const held = keys.map((k) => heldMatchKey(this.restaurantId, k));
    // Past waiters: the import holds its slices' keys meanwhile (key-holds.ts).
    return { held, taking: matchKeyHolds.take(held, true) };
  }

  done(): void {
    if (this.registered) takers.delete(this.restaurantId);
    this.registered = false;
  }
}

export class ImportKeyHold {
  /** The keys granted to the import, in its own spelling (analysis.ts): those it lets go. */
  private readonly held = new Set<string>();
  /** Keys asked for and not granted yet: not asked for again, and not let go before they are granted. */
  private readonly taking = new Set<string>();
  /** Keys of `taking` the import let go meanwhile: let go when granted. */
  private readonly dropped = new Set<string>();
  /** The job ended (letGoAll): a grant that arrives later is let go at once, nobody else would. */
  private ended = false;
  private readonly taker: PastWaitersTaker;

  constructor(
    private readonly restaurantId: string,
    /** Lets keys go on the main thread (the import's thread); undefined: here. */
    private readonly releaseThere?: (keys: string[]) => void,
  ) {
    this.taker = new PastWaitersTaker(restaurantId);
  }

  /**
   * The keys of `keys` the import neither holds nor is taking, now being taken: the caller takes them
   * (`takeHere`, or the main thread) and says when they are granted (`granted`). They count as the
   * import's only then: the queue may still hand them to a request first, and letting go of a key
   * not granted would let go of that request's.
   */
  fresh(keys: Iterable<string>): string[] {
    const out: string[] = [];
    for (const k of keys)
      if (!this.held.has(k) && !this.taking.has(k)) {
        this.taking.add(k);
        out.push(k);
      }
    return out;
  }

  /** Takes `fresh` keys in this thread's queue: null when taken (and granted) at once. */
  takeHere(fresh: readonly string[]): Promise<void> | null {
    if (fresh.length === 0) return null;
    let taking: Promise<void> | null;
    try {
      taking = this.taker.take(fresh).taking;
    } catch (err) {
      // Refused (a second taker of the restaurant): never asked for, never to be let go.
      for (const k of fresh) this.taking.delete(k);
      throw err;
    }
    if (taking === null) {
      this.granted(fresh);
      return null;
    }
    return taking.then(() => this.granted(fresh));
  }

  /**
   * `keys` (from `fresh`) are held for the import in the queue: those it let go meanwhile, or all of
   * them once the job has ended, are let go at once.
   */
  granted(keys: readonly string[]): void {
    const out: string[] = [];
    for (const k of keys) {
      if (!this.taking.delete(k)) continue;
      if (this.dropped.delete(k) || this.ended) out.push(k);
      else this.held.add(k);
    }
    this.release(out);
  }

  /** Whether a request (or anyone) waits for a key the import holds here. */
  waitedFor(): boolean {
    if (this.releaseThere) return false;
    const prefix = heldMatchKey(this.restaurantId, '');
    return matchKeyHolds.waitedFor((k) => k.startsWith(prefix) && this.held.has(k.slice(prefix.length)));
  }

  /** Lets go of those of `keys` the import holds; those it is taking, once granted. */
  letGo(keys: Iterable<string>): void {
    const out: string[] = [];
    for (const k of keys)
      if (this.held.delete(k)) out.push(k);
      else if (this.taking.has(k)) this.dropped.add(k);
    this.release(out);
  }

  /** Lets go of every key granted (the job's end); those still being taken, once granted. */
  letGoAll(): void {
    this.ended = true;
    const out = [...this.held];
    this.held.clear();
    this.release(out);
    this.taker.done();
  }

  private release(keys: string[]): void {
    if (keys.length === 0) return;
    if (this.releaseThere) this.releaseThere(keys);
    else matchKeyHolds.release(keys.map((k) => heldMatchKey(this.restaurantId, k)));
  }
}

/**
 * The main thread's side of an import thread's keys (thread-host.ts): takes those the thread names
 * with a match question, lets go of those it says, and of all it still holds when the job ends.
 */
export class HeldForThread {
  private readonly held = new Set<string>();
  private ended = false;
  private readonly taker: PastWaitersTaker;

  constructor(private readonly restaurantId: string) {
    this.taker = new PastWaitersTaker(restaurantId);
  }

  /** Resolves once `keys` (the thread's spelling, none held yet) are held. */
  async take(keys: readonly string[]): Promise<void> {
    if (keys.length === 0 || this.ended) return;
    const { held: ks, taking } = this.taker.take(keys);
    if (taking) await taking;
    // Granted after the job ended (its thread died waiting): nobody will let them go but us.
    if (this.ended) matchKeyHolds.release(ks);
    else for (const k of ks) this.held.add(k);
  }

  release(keys: readonly string[]): void {
    const ks: string[] = [];
    for (const k of keys) {
      const key = heldMatchKey(this.restaurantId, k);
      if (this.held.delete(key)) ks.push(key);
    }
    matchKeyHolds.release(ks);
  }

  /** The job ended (or its thread died): every key it still holds is let go. */
  end(): void {
    this.ended = true;
    matchKeyHolds.release([...this.held]);
    this.held.clear();
    this.taker.done();
  }
}
