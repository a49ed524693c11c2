// Version 3 of `analytics_guests`: each reservation counts once, for the guest it belongs to now (the
// survivor of its customer's merges), whatever its status. A re-attachment (PATCH customer) or a
// detachment takes it out of its old guest's count and puts it in the new one's; a merge moves the
// absorbed customer's whole count to its survivor's and leaves the absorbed one at 0, marked
// `merged_into`. So, for every customer not merged away, `reservations` is the number of reservations
// whose customer is it or was merged into it, in every order of re-attachments and merges (version 2
// counted a reservation once per customer that named it, and twice for a survivor of both).
//
// Each function is idempotent through the documents' `_pos`: a document stamped with this event's
// position already has what this event does to it (an event redelivered after a crash part-way).
// The same rules as foldFacts (figures.ts), which the property tests compare with.
import type { Collection } from '../../src/ports/document-store';
import type { GuestDoc } from './projection';

/** A guest document's `_id`: the restaurant and the customer. */
export const guestId = (restaurant: string, customer: string) => `${restaurant}|${customer}`;

interface Guest {
  customer: string;
  doc: GuestDoc | null;
}

/**
 * The guest a reservation of `customer` counts for: the end of the `merged_into` chain (survivorOf's
 * walk, one read a hop: chains are as long as the merges that closed them, one in most cases).
 */
async function survivorDoc(col: Collection<GuestDoc>, restaurant: string, customer: string): Promise<Guest> {
  const seen = new Set([customer]);
  let at = customer;
  for (;;) {
    const doc = await col.findOne({ _id: guestId(restaurant, at) });
    const next = doc?.merged_into;
    if (next === undefined || seen.has(next)) return { customer: at, doc };
    seen.add(next);
    at = next;
  }
}

/** Adds `n` to the guest's count (once); returns the count before this event. */
async function addTo(
  col: Collection<GuestDoc>,
  restaurant: string,
  g: Guest,
  n: number,
  pos: string,
): Promise<number> {
  if (g.doc && g.doc._pos >= pos) return g.doc.reservations - n;
  const before = g.doc?.reservations ?? 0;
  const id = guestId(restaurant, g.customer);
  await col.replaceOne(
    { _id: id },
    {
      _id: id,
      restaurant_id: restaurant,
      customer_id: g.customer,
      reservations: before + n,
      ...(g.doc?.merged_into === undefined ? {} : { merged_into: g.doc.merged_into }),
      _pos: pos,
    },
    { upsert: true },
  );
  return before;
}

/** A reservation created for `customer`: counted for its guest. Returns the guest's reservations before it. */
export async function countCreated(
  col: Collection<GuestDoc>,
  restaurant: string,
  customer: string,
  pos: string,
): Promise<number> {
  return addTo(col, restaurant, await survivorDoc(col, restaurant, customer), 1, pos);
}

/**
 * A reservation moved from customer `from` to `to` (either null: none): out of the old guest's count,
 * into the new one's, unless both are one guest (moved to its customer's survivor, or between two
 * customers since merged into one). Returns the new guest's reservations before it (0 when none).
 */
export async function moveReservation(
  col: Collection<GuestDoc>,
  restaurant: string,
  from: string | null,
  to: string | null,
  pos: string,
): Promise<number> {
  const left = from === null ? null : await survivorDoc(col, restaurant, from);
  const joined = to === null ? null : await survivorDoc(col, restaurant, to);
  // One guest: the reservation stays in its count (its guest kind was decided when it first had one).
  if (left && joined && left.customer === joined.customer) return 0;
  if (left) await addTo(col, restaurant, left, -1, pos);
  return joined ? addTo(col, restaurant, joined, 1, pos) : 0;
}

/**
 * `absorbed` merged into `survivor`: the absorbed customer's count moves to the survivor's guest, then
 * the absorbed one is marked (count 0, `merged_into`), last, so a redelivery after a crash between the
 * two writes finds the guest stamped and only writes the mark. A customer merged before (into anyone)
 * moves nothing again, nor does a merge into a customer already merged into the absorbed one (a
 * cycle: the write side refuses both, the log may hold anything).
 */
export async function mergeGuests(
  col: Collection<GuestDoc>,
  restaurant: string,
  survivor: string,
  absorbed: string,
  pos: string,
): Promise<void> {
  const absorbedId = guestId(restaurant, absorbed);
  const gone = await col.findOne({ _id: absorbedId });
  if (gone?.merged_into !== undefined) return; // merged before, or by this event before a crash
  const into = await survivorDoc(col, restaurant, survivor);
  if (into.customer === absorbed) return;
  await addTo(col, restaurant, into, gone?.reservations ?? 0, pos);
  await col.replaceOne(
    { _id: absorbedId },
    {
      _id: absorbedId,
      restaurant_id: restaurant,
      customer_id: absorbed,
      reservations: 0,
      merged_into: survivor,
      _pos: pos,
    },
    { upsert: true },
  );
}
