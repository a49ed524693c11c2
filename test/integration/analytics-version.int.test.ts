// analytics version 2 counts a reservation re-attached from a merged-away customer to its survivor
// once (version 1 counted it again on top of what the merge folded in). A store built by version 1
// keeps serving it while version 2 is rebuilt beside it; the switched-to read model equals a replay.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANALYTICS_DAYS,
  ANALYTICS_GUESTS,
  ANALYTICS_RESERVATIONS,
  ANALYTICS_SHIFT_DAYS,
  analyticsProjectionV1,
  type GuestDoc,
} from '../../projections/analytics/projection';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { ANY } from '../../src/ports/event-store';
import { builtBefore, comparedWithReplay, upgraded } from '../helpers/projection-upgrade';

const t = suite('analytics version 2: a reservation re-attached to a merge survivor');
const NAME = 'analytics';
const AT = '2026-06-01T10:00:00.000Z';

async function history(events: MemoryEventStore): Promise<void> {
  await events.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationCreated',
        data: {
          reservation_id: 'res_1',
          restaurant_id: 'rest_a',
          at: AT,
          reservation: {
            reservation_id: 'res_1',
            restaurant_id: 'rest_a',
            service_date: '2026-06-05',
            shift_id: 'dinner',
            start_at: '2026-06-05T20:00:00+02:00',
            created_at: AT,
            party_size: 2,
            status: 'CONFIRMED',
            source: 'WEBSITE',
            customer_id: 'cus_a',
          },
        },
      },
    ],
    ANY,
  );
  await events.append(
    'customer-cus_b',
    [
      {
        type: 'CustomerMerged',
        data: { restaurant_id: 'rest_a', customer_id: 'cus_b', merged_customer_id: 'cus_a', at: AT },
      },
    ],
    ANY,
  );
  // The partner re-attaches the reservation to the surviving customer (PATCH customer {id}).
  await events.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationUpdated',
        data: { reservation_id: 'res_1', at: AT, changes: { customer_id: 'cus_b' }, previous: {} },
      },
    ],
    ANY,
  );
}

t('the old store counted the reservation twice; version 2 counts it once and equals a replay', async () => {
  const events = new MemoryEventStore();
  const docs = new EmbeddedDocumentStore();
  await history(events);

  await builtBefore(events, docs, analyticsProjectionV1);
  const old = await docs.collection<GuestDoc>(ANALYTICS_GUESTS).findOne({ _id: 'rest_a|cus_b' });
  assert.is(old?.reservations, 2, 'version 1: the merge folded it in, the re-attach added it again');

  const { aliased, stop } = await upgraded(events, docs, NAME);
  try {
    assert.is(aliased.resolve(ANALYTICS_GUESTS), `${ANALYTICS_GUESTS}_v2`);
    const served = aliased.collection<GuestDoc>(ANALYTICS_GUESTS);
    assert.is((await served.findOne({ _id: 'rest_a|cus_b' }))?.reservations, 1, 'one reservation, once');
    assert.is((await served.findOne({ _id: 'rest_a|cus_a' }))?.merged_into, 'cus_b');

    const compared = await comparedWithReplay(events, aliased, NAME, [
      ANALYTICS_DAYS,
      ANALYTICS_SHIFT_DAYS,
      ANALYTICS_RESERVATIONS,
      ANALYTICS_GUESTS,
    ]);
    assert.equal(compared.differences, []);
    assert.is(compared.documents, 5, 'a day, a shift-day, a reservation, two guests');
  } finally {
    await stop();
  }
});

t.run();
