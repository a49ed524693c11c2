// analytics version 2 counted a reservation re-attached from a merged-away customer to its survivor
// once (version 1 counted it again on top of what the merge folded in); version 3 counts every
// reservation once, for the guest it belongs to now, in whatever order it was moved and its customers
// merged (version 2 counted one moved from A to B before A was merged into B twice for B). A store
// built by an older version keeps serving it while version 3 is rebuilt beside it; the switched-to
// read model equals a replay, and the replaced version's collections are dropped after the grace period.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ANALYTICS_DAYS,
  ANALYTICS_GUESTS,
  ANALYTICS_RESERVATIONS,
  ANALYTICS_SHIFT_DAYS,
  analyticsProjection,
  analyticsProjectionV1,
  analyticsProjectionV2,
  type GuestDoc,
} from '../../projections/analytics/projection';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { ANY } from '../../src/ports/event-store';
import { PROJECTION_VERSIONS, type VersionDoc } from '../../src/projection/versions';
import { HANG_MS, withTimeout } from '../contracts/event-store.helpers';
import { builtBefore, comparedWithReplay, upgraded } from '../helpers/projection-upgrade';

const t = suite('analytics version 3: each reservation counted once, for the guest it belongs to now');
const NAME = 'analytics';
const AT = '2026-06-01T10:00:00.000Z';
const COLLECTIONS = [ANALYTICS_DAYS, ANALYTICS_SHIFT_DAYS, ANALYTICS_RESERVATIONS, ANALYTICS_GUESTS];

const created = {
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
};
const merged = {
  type: 'CustomerMerged',
  data: { restaurant_id: 'rest_a', customer_id: 'cus_b', merged_customer_id: 'cus_a', at: AT },
};
// The partner re-attaches the reservation to the other customer (PATCH customer {id}).
const reattached = {
  type: 'ReservationUpdated',
  data: { reservation_id: 'res_1', at: AT, changes: { customer_id: 'cus_b' }, previous: {} },
};

async function history(events: MemoryEventStore, order: 'merge first' | 'move first'): Promise<void> {
  await events.append('reservation-res_1', [created], ANY);
  if (order === 'merge first') {
    await events.append('customer-cus_b', [merged], ANY);
    await events.append('reservation-res_1', [reattached], ANY);
  } else {
    await events.append('reservation-res_1', [reattached], ANY);
    await events.append('customer-cus_b', [merged], ANY);
  }
}

async function servesOnce(aliased: Awaited<ReturnType<typeof upgraded>>['aliased']) {
  assert.is(aliased.resolve(ANALYTICS_GUESTS), `${ANALYTICS_GUESTS}_v3`);
  const served = aliased.collection<GuestDoc>(ANALYTICS_GUESTS);
  assert.is((await served.findOne({ _id: 'rest_a|cus_b' }))?.reservations, 1, 'one reservation, once');
  const gone = await served.findOne({ _id: 'rest_a|cus_a' });
  assert.is(gone?.merged_into, 'cus_b');
  assert.is(gone?.reservations, 0, 'merged away: its reservation is the survivor’s');
}

t(
  'a version 1 store (re-attached after the merge: counted twice) is rebuilt as version 3: once',
  async () => {
    assert.is(analyticsProjection.version, 3);
    const events = new MemoryEventStore();
    const docs = new EmbeddedDocumentStore();
    await history(events, 'merge first');

    await builtBefore(events, docs, analyticsProjectionV1);
    const old = await docs.collection<GuestDoc>(ANALYTICS_GUESTS).findOne({ _id: 'rest_a|cus_b' });
    assert.is(old?.reservations, 2, 'version 1: the merge folded it in, the re-attach added it again');

    const { aliased, versions, stop } = await upgraded(events, docs, NAME);
    try {
      await servesOnce(aliased);
      const compared = await comparedWithReplay(events, aliased, NAME, COLLECTIONS);
      assert.equal(compared.differences, []);
      assert.is(compared.documents, 5, 'a day, a shift-day, a reservation, two guests');
      await withTimeout(versions.whenRetired(), HANG_MS, 'the retirement of version 1');
      for (const c of COLLECTIONS)
        assert.is(await docs.collection(c).count(), 0, `${c} (version 1) dropped after the grace period`);
    } finally {
      await stop();
    }
  },
);

t(
  'a version 2 store (moved before the merge: counted twice) switches to version 3 and drops its collections',
  async () => {
    const events = new MemoryEventStore();
    const docs = new EmbeddedDocumentStore();
    await history(events, 'move first');

    // Version 2 is served (a store that went through the previous upgrade).
    const { stop: stopV2 } = await upgraded(events, docs, NAME, [
      analyticsProjectionV1,
      analyticsProjectionV2,
    ]);
    await stopV2();
    const v2 = await docs.collection<GuestDoc>(`${ANALYTICS_GUESTS}_v2`).findOne({ _id: 'rest_a|cus_b' });
    assert.is(
      v2?.reservations,
      2,
      'version 2: counted for cus_b when moved, and again from cus_a by the merge',
    );

    const { aliased, versions, stop } = await upgraded(events, docs, NAME);
    try {
      await servesOnce(aliased);
      const compared = await comparedWithReplay(events, aliased, NAME, COLLECTIONS);
      assert.equal(compared.differences, []);
      // The grace period's timer does not hold the process open: the hang bound's does.
      await withTimeout(versions.whenRetired(), HANG_MS, 'the retirement of version 2');
      for (const c of COLLECTIONS)
        assert.is(await docs.collection(`${c}_v2`).count(), 0, `${c}_v2 dropped after the grace period`);
      const doc = await docs.collection<VersionDoc>(PROJECTION_VERSIONS).findOne({ _id: NAME });
      assert.is(doc?.active, 3);
      assert.equal(doc?.retired, [], 'nothing left to retire');
    } finally {
      await stop();
    }
  },
);

t.run();
