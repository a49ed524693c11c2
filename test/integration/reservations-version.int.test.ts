// `reservations` on a store built before its documents kept `text_owners` / `text_owner_ids` (a
// MongoDB store keeps its read models across restarts): the service upgraded onto it rebuilds the
// read model beside the old one (version 2) and switches to it, so erasing the customer whose box
// still holds a detached reservation's text blanks it, and the served read model equals a replay
// (what `audit verify` compares). Embedded, the store starts empty: version 2 serves at once, nothing
// is rebuilt a second time in the background, and `projections status` says so.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allProjectionVersions } from '../../projections/index';
import { RESERVATIONS, type ReservationDoc } from '../../projections/reservations';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
import { runCli } from '../helpers/cli-in-process';
import { builtBefore, comparedWithReplay, upgraded } from '../helpers/projection-upgrade';
import { startTestService } from '../helpers/service';

const t = suite('reservations: a store built before text_owners');
const NAME = 'reservations';
const AT = '2026-06-02T10:00:00.000Z';
const ALLERGY = 'Jane Doe: peanuts';

const reservations = () => allProjectionVersions().filter((p) => p.name === NAME);

/** A reservation of cus_1 with their text, then taken from its customer (the text stays in cus_1's box). */
async function history(events: MemoryEventStore): Promise<void> {
  await events.append(
    'reservation-r1',
    [
      {
        type: 'ReservationCreated',
        data: {
          reservation_id: 'r1',
          restaurant_id: 'rest_a',
          reservation: {
            id: 'r1',
            restaurant_id: 'rest_a',
            customer_id: 'cus_1',
            status: 'RECORDED',
            start_at: '2026-06-10T20:00:00+02:00',
            service_date: '2026-06-10',
            party_size: 2,
            allergies: ALLERGY,
            custom_message: 'Jane Doe birthday',
            metadata: { note: 'Jane' },
            cancellation_reason: null,
            feedback: null,
            payments: [],
            created_at: AT,
            updated_at: AT,
          },
        },
      },
      {
        type: 'ReservationUpdated',
        data: { reservation_id: 'r1', restaurant_id: 'rest_a', changes: { customer_id: null }, at: AT },
      },
    ],
    NO_STREAM,
  );
}

t(
  'the old store is rebuilt as version 2 and switched to; erasing the customer blanks the detached text',
  async () => {
    const events = new MemoryEventStore();
    const docs = new EmbeddedDocumentStore();
    await history(events);

    // The store as the service left it before the upgrade: the same documents, without text_owners.
    const v1 = reservations().find((p) => (p.version ?? 1) === 1);
    assert.ok(v1, 'version 1 is still listed for stores built with it');
    await builtBefore(events, docs, v1);
    const col = docs.collection<ReservationDoc>(RESERVATIONS);
    const built = await col.findOne({ _id: 'r1' });
    assert.ok(built);
    const { text_owners: _o, text_owner_ids: _i, ...old } = built;
    await col.replaceOne({ _id: 'r1' }, old as ReservationDoc);

    // The upgraded service on that store: every version it lists.
    const { aliased, runner, stop } = await upgraded(events, docs, NAME);
    const served = aliased.collection<ReservationDoc>(RESERVATIONS);
    assert.equal((await served.findOne({ _id: 'r1' }))?.text_owner_ids, ['cus_1']);

    await events.append(
      'customer-cus_1',
      [{ type: 'CustomerDeleted', data: { customer_id: 'cus_1', restaurant_id: 'rest_a', at: AT } }],
      NO_STREAM,
    );
    await runner.catchUp();
    const erased = await served.findOne({ _id: 'r1' });
    assert.is(erased?.allergies, null, 'the text in the erased customer’s box is blanked');
    assert.is(erased?.custom_message, null);
    assert.not.match(JSON.stringify(await served.find({})), /Jane/);

    // What `audit verify` compares: the served read model equals a replay of the log.
    const compared = await comparedWithReplay(events, aliased, NAME, [RESERVATIONS]);
    assert.equal(compared.differences, []);
    await stop();
  },
);

t(
  'embedded: the newest version serves at once, nothing rebuilds, and projections status shows it',
  async () => {
    const svc = await startTestService({ demo: false });
    try {
      const newest = Math.max(...reservations().map((p) => p.version ?? 1));
      assert.is(newest, 2);
      assert.is(svc.rt.versions.aliased.resolve(RESERVATIONS), `${RESERVATIONS}_v2`);
      const status = svc.rt.versions.status().find((s) => s.name === NAME);
      assert.is(status?.active, 2);
      assert.is(status?.building, null, 'no background rebuild on an embedded start');
      assert.is(await svc.rt.projections.docs.collection(RESERVATIONS).count(), 0, 'version 1 never built');
      const rows = (await runCli(svc, 'projections status', { json: true })).map((l) => JSON.parse(l));
      const row = rows.find((r) => r.projection === NAME);
      assert.is(row?.active_version, 2);
      assert.equal(row?.versions_in_code, [1, 2]);
      assert.equal(row?.collections, { [RESERVATIONS]: `${RESERVATIONS}_v2` });
      assert.is(row?.state, 'serving');
    } finally {
      await svc.close();
    }
  },
);

t.run();
