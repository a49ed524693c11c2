// Erasure in the `reservations` read model (docs/AUDIT.md, right to erasure): when a customer is
// deleted, what their reservations hold that the guest wrote (the fields src/privacy/seal.ts seals
// in reservation events) is blanked at once, as a replay after the key's destruction would show it.
// The reservations projection calls this on CustomerDeleted; idempotent through each document's _pos.
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString, type RecordedEvent } from '../src/ports/event-store';
import { RESERVATIONS, type ReservationDoc } from './reservations';

/** The reservation fields a guest wrote, as they read once erased. */
export const ERASED_RESERVATION_FIELDS = {
  allergies: null,
  custom_message: null,
  metadata: {},
  cancellation_reason: null,
} as const;

export async function eraseCustomerReservations(event: RecordedEvent, docs: DocumentStore): Promise<void> {
  const { customer_id: customerId, restaurant_id: restaurantId } = event.data as {
    customer_id?: unknown;
    restaurant_id?: unknown;
  };
  if (typeof customerId !== 'string' || typeof restaurantId !== 'string') return;
  const pos = positionToString(event.position);
  const col = docs.collection<ReservationDoc>(RESERVATIONS);
  for (const doc of await col.find({ restaurant_id: restaurantId, customer_id: customerId })) {
    if (doc._pos >= pos) continue;
    const set: Record<string, unknown> = { ...ERASED_RESERVATION_FIELDS, _pos: pos };
    if (doc.feedback) set.feedback = { ...doc.feedback, comment: null, answer: null };
    await col.updateOne({ _id: doc._id, _pos: doc._pos }, { $set: set });
  }
}
