// Following a customer merged away to the customer it lives on in now, on the write side (the
// customers' own streams, never a read model). The one walk every caller uses: inline reservation
// customers (a match merged away since the read model showed it), missed calls (a retry after the
// call's customer was merged) and the re-match of POST /customers and the CSV import (the position the
// read models must include first).
import type { WriteDeps } from '../../src/core/write-deps';
import { customerStream } from './events';
import { type CustomerState, evolveCustomer, initialCustomer } from './state';

/**
 * The most merges one walk follows. A merge never writes a cycle nor a chain anywhere near this long
 * (each merge closes a customer for good), but the walk must end on any log, whatever it holds.
 */
export const MAX_MERGE_HOPS = 32;

export interface MergeWalk {
  /** The customer the walk ended on, and its state. */
  customerId: string;
  state: CustomerState;
  /**
   * `survivor`: `state` is not merged away (active, deleted, or no event at all); `cycle`: the next
   * customer was already walked through; `too_long`: MAX_MERGE_HOPS merges followed and `state` is
   * still merged away. In the last two, nobody the walk read is the guest's live record.
   */
  end: 'survivor' | 'cycle' | 'too_long';
  /** The latest position among the last events of the customers walked (undefined: none has any). */
  lastPosition: bigint | undefined;
}

export async function followMerges(
  deps: Pick<WriteDeps, 'events'>,
  customerId: string,
  maxHops = MAX_MERGE_HOPS,
): Promise<MergeWalk> {
  const seen = new Set<string>();
  let lastPosition: bigint | undefined;
  for (let id = customerId, hops = 0; ; hops++) {
    seen.add(id);
    const events = await deps.events.readStream(customerStream(id));
    const last = events.at(-1)?.position;
    if (last !== undefined && (lastPosition === undefined || last > lastPosition)) lastPosition = last;
    const state = events.reduce(evolveCustomer, initialCustomer);
    const next = state.status === 'merged' ? state.mergedInto : null;
    if (next === null) return { customerId: id, state, end: 'survivor', lastPosition };
    if (seen.has(next)) return { customerId: id, state, end: 'cycle', lastPosition };
    if (hops >= maxHops) return { customerId: id, state, end: 'too_long', lastPosition };
    id = next;
  }
}
