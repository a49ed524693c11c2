// Merge command: close the absorbed customer, then fold it into the surviving one. Each step appends
// with its stream's expected revision; running the merge again after a crash between them finishes it.
// Merges of one restaurant run one at a time (merge-slot.ts): each reads the survivor only once the
// merge before it has ended, so concurrent merges never write a cycle.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { Logger } from '../../src/logger';
import { type RelinkDeps, type RelinkOutcome, relinkReservations } from '../reservations/relink';
import { decideAbsorb, decideMergeInto } from './decide-merge';
import { customerStream } from './events';
import { deleteMergedAway, loadCustomer, relinkMergedAway, withMergedInto } from './handler';
import { freeMergeSlot, takeMergeSlot } from './merge-slot';
import { type CustomerState, evolveCustomer, initialCustomer } from './state';

export interface MergeOutcome {
  /** Last position the merge appended, null when the merge had already happened. */
  position: bigint | null;
  target: CustomerState;
  /** The reservations that now show the survivor (commands/reservations/relink.ts). */
  relinked: RelinkOutcome;
}

export async function mergeCustomers(
  deps: RelinkDeps & { logger?: Pick<Logger, 'warn'> },
  sourceId: string,
  intoId: string,
  meta: CommandMeta,
): Promise<MergeOutcome> {
  const merged = await mergeOnce(deps, sourceId, intoId, meta);
  // Outside the slot, which frees itself once stale: a customer with thousands of reservations takes
  // longer than that. Also when the merge was made before: a merge run again finishes what a crash
  // left, and records it for one made before reservations recorded it.
  const relinked = await relinkReservations(
    deps,
    {
      restaurantId: merged.target.restaurantId as string,
      customerId: sourceId,
      linked: await withMergedInto(deps, sourceId),
      into: intoId,
      reason: 'CUSTOMER_MERGED',
    },
    meta,
  );
  return { ...merged, relinked };
}

async function mergeOnce(
  deps: RelinkDeps & { logger?: Pick<Logger, 'warn'> },
  sourceId: string,
  intoId: string,
  meta: CommandMeta,
): Promise<Omit<MergeOutcome, 'relinked'>> {
  // The restaurant's slot, taken before the survivor is read. A source that does not exist has no
  // restaurant: the merge refuses it (404) without a slot.
  const restaurantId = (await loadCustomer(deps, sourceId)).restaurantId;
  const slot =
    restaurantId === null
      ? null
      : await takeMergeSlot(deps, { restaurantId, customerId: sourceId, intoId }, meta);
  try {
    return await mergeInSlot(deps, sourceId, intoId, meta);
  } finally {
    // The merge's own outcome stands: a slot that could not be freed (the store refused the append)
    // is only logged, as it frees itself once stale (MERGE_SLOT_STALE_AFTER_MS).
    if (slot)
      await freeMergeSlot(deps, slot, meta).catch((err: unknown) =>
        deps.logger?.warn(
          { err, restaurant_id: slot.cmd.restaurantId, merge_id: slot.cmd.mergeId },
          'customer merge: the merge slot could not be freed; it frees itself once stale',
        ),
      );
  }
}

async function mergeInSlot(
  deps: RelinkDeps,
  sourceId: string,
  intoId: string,
  meta: CommandMeta,
): Promise<Omit<MergeOutcome, 'relinked'>> {
  const at = deps.clock.now().toISOString();
  const common = { initial: initialCustomer, evolve: evolveCustomer, metadata: meta, clock: deps.clock };
  const target = await loadCustomer(deps, intoId);
  const closed = await runCommand<CustomerState>(deps.events, {
    ...common,
    stream: customerStream(sourceId),
    decide: (source) => decideMergeInto(source, sourceId, target, intoId, at),
  });
  let absorbed: Awaited<ReturnType<typeof runCommand<CustomerState>>>;
  try {
    absorbed = await runCommand<CustomerState>(deps.events, {
      ...common,
      stream: customerStream(intoId),
      decide: (t) => decideAbsorb(t, intoId, closed.state, sourceId, at),
    });
  } catch (err) {
    // The surviving customer was deleted (erased) since the first step: the closed one, merged into
    // it and so the same person, is deleted too, or it would stay readable with nobody to erase it.
    if ((await loadCustomer(deps, intoId)).status === 'deleted') {
      await deleteMergedAway(deps, [{ absorbed: sourceId, into: intoId }], meta);
      await relinkMergedAway(deps, [{ absorbed: sourceId, into: intoId }], meta);
    }
    throw err;
  }
  return { position: absorbed.position ?? closed.position, target: absorbed.state };
}
