// The small world the sealing layer's tests share: two customers, A (Amelia) and B (Bertrand), and a
// reservation of A's holding text A wrote; and the body of a fan-out that moved it from A to B.
import { type EventStore, NO_STREAM } from '../../src/ports/event-store';

/** CustomerCreated of cus_a and cus_b, then (unless told not to) A's reservation res_1 with her text. */
export async function seedTwoCustomers(store: EventStore, { reservation = true } = {}): Promise<void> {
  for (const [id, name] of [
    ['cus_a', 'Amelia Qqa'],
    ['cus_b', 'Bertrand Qqb'],
  ])
    await store.append(
      `customer-${id}`,
      [
        {
          type: 'CustomerCreated',
          data: { customer_id: id, restaurant_id: 'r', at: 't', profile: { name } },
        },
      ],
      NO_STREAM,
    );
  if (!reservation) return;
  await store.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationCreated',
        data: {
          reservation_id: 'res_1',
          restaurant_id: 'r',
          reservation: { reservation_id: 'res_1', customer_id: 'cus_a', allergies: 'A wrote: celery' },
        },
      },
    ],
    NO_STREAM,
  );
}

/** A reservation.updated body moving res_1 from A (named `previousName`) to B. */
export const movedToB = (previousName: string) =>
  JSON.stringify({
    id: 'evt_1',
    type: 'reservation.updated',
    data: {
      object: { id: 'res_1', customer: { id: 'cus_b', name: 'Bertrand Qqb', lang: 'FR' } },
      previous_attributes: { customer: { id: 'cus_a', name: previousName, lang: 'FR' } },
    },
  });
