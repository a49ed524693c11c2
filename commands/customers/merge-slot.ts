// One customer merge at a time per restaurant, decided on the write side. A merge reads the surviving
// customer (it must not be merged away) and writes the absorbed one's stream: two merges run together
// (two operators, two CLI processes) each read a survivor the other was closing, so merging A into B
// and B into A at once merged each into the other (a cycle: both answered 404 and were lost), and
// A→B, B→C, C→A likewise. Before it reads anything, a merge takes the restaurant's merge slot, the
// stream `customer-merge-slot-<restaurant id>`, with an expected revision, so merges of one restaurant
// run one after the other and each reads what the one before wrote. The merge frees the slot when it
// ends, whatever the outcome; should its process die mid-way, the slot is free once it was taken
// MERGE_SLOT_STALE_AFTER_MS ago (a merge is three appends), so a crash never leaves it held.
import type { CommandMeta } from '../../src/core/command-meta';
import { conflict } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import { type NewEvent, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';

/** A slot taken this long ago is free again (its merge's process died). */
export const MERGE_SLOT_STALE_AFTER_MS = 30_000;
/** How long a merge waits for the slot before its 409 (merges are short: it is usually freed at once). */
const WAIT_ATTEMPTS = 40;
const WAIT_STEP_MS = 50;

export const mergeSlotStream = (restaurantId: string) => `customer-merge-slot-${restaurantId}`;

export interface MergeSlotEvent {
  type: string;
  data: { merge_id: string; customer_id: string; into_customer_id: string; at: string };
}

export interface MergeSlotCommand {
  mergeId: string;
  restaurantId: string;
  customerId: string;
  intoId: string;
}

/**
 * Pure: the event that gives merge `cmd` the slot, given the slot stream's last event, or a 409 naming
 * the merge holding it (details.reason MERGE_RUNNING).
 */
export function decideTakeMergeSlot(
  last: MergeSlotEvent | null,
  cmd: MergeSlotCommand,
  now: Date,
): NewEvent[] {
  if (
    last?.type === 'CustomerMergeSlotTaken' &&
    last.data.merge_id !== cmd.mergeId &&
    now.getTime() - Date.parse(last.data.at) < MERGE_SLOT_STALE_AFTER_MS
  )
    throw conflict(
      `another merge of this restaurant's customers is running (${last.data.customer_id} into ${last.data.into_customer_id}); retry once it ends`,
      { reason: 'MERGE_RUNNING' },
    );
  return [
    {
      type: 'CustomerMergeSlotTaken',
      data: {
        restaurant_id: cmd.restaurantId,
        merge_id: cmd.mergeId,
        customer_id: cmd.customerId,
        into_customer_id: cmd.intoId,
        at: now.toISOString(),
      },
      metadata: { restaurant_id: cmd.restaurantId },
    },
  ];
}

export interface MergeSlot {
  cmd: MergeSlotCommand;
  /** The slot stream's revision once taken: the free is appended there, if nobody took it since. */
  revision: number;
}

/** Takes the restaurant's merge slot, waiting a little while another merge holds it (then 409). */
export async function takeMergeSlot(
  deps: WriteDeps,
  cmd: Omit<MergeSlotCommand, 'mergeId'>,
  meta: CommandMeta,
): Promise<MergeSlot> {
  const full = { ...cmd, mergeId: newId('mrg') };
  const stream = mergeSlotStream(cmd.restaurantId);
  for (let attempt = 0; ; attempt++) {
    const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
    let events: NewEvent[];
    try {
      events = decideTakeMergeSlot((last as MergeSlotEvent | undefined) ?? null, full, deps.clock.now());
    } catch (err) {
      if (attempt >= WAIT_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
      continue;
    }
    try {
      const r = await deps.events.append(
        stream,
        events.map((e) => ({ ...e, metadata: { ...meta, ...e.metadata } })),
        last ? last.revision : NO_STREAM,
      );
      return { cmd: full, revision: r.nextRevision };
    } catch (err) {
      // Someone took it meanwhile: decide again against them.
      if (!(err instanceof WrongExpectedRevisionError) || attempt >= WAIT_ATTEMPTS) throw err;
    }
  }
}

/** Frees the slot `slot` took; nothing when another merge has taken it since (it was stale). */
export async function freeMergeSlot(
  deps: WriteDeps,
  slot: MergeSlot,
  meta: CommandMeta,
): Promise<bigint | null> {
  const { cmd } = slot;
  try {
    const r = await deps.events.append(
      mergeSlotStream(cmd.restaurantId),
      [
        {
          type: 'CustomerMergeSlotFreed',
          data: {
            restaurant_id: cmd.restaurantId,
            merge_id: cmd.mergeId,
            customer_id: cmd.customerId,
            into_customer_id: cmd.intoId,
            at: deps.clock.now().toISOString(),
          },
          metadata: { ...meta, restaurant_id: cmd.restaurantId },
        },
      ],
      slot.revision,
    );
    return r.position;
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err;
    return null;
  }
}
