// The reservations step of a merge and of a deletion (commands/reservations/relink.ts) over more
// reservations than one batch: every reservation showing the customer records the change once,
// another customer's and another restaurant's none, and running it again records nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer, deleteCustomer } from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { decideCreate } from '../../commands/reservations/decide-create';
import { CUSTOMER_RELINKED, reservationStream } from '../../commands/reservations/events';
import { initialReservation } from '../../commands/reservations/evolve';
import { RELINK_BATCH, relinkLeftover, relinkReservations } from '../../commands/reservations/relink';
import { RESERVATIONS, reservationsProjection } from '../../projections/reservations';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { Logger } from '../../src/logger';
import { type EventStore, NO_STREAM } from '../../src/ports/event-store';
import { ProjectionRunner } from '../../src/projection/runner';
import { type CustomerWorld, customerWorld } from '../helpers/customers';
import { createInput } from '../helpers/reservation-input';

const t = suite<{ w: CustomerWorld }>('reservations: relinked in batches');

t.before.each(async (ctx) => {
  const w = await customerWorld();
  const reservations = new ProjectionRunner(w.events, w.docs, [reservationsProjection]);
  await reservations.start();
  ctx.w = {
    ...w,
    settle: async () => {
      await reservations.catchUp();
      return w.settle();
    },
  };
});

const customer = async (w: CustomerWorld, name: string) =>
  (await createCustomer(w, w.restaurant, { name }, w.meta)).customerId;

async function book(w: CustomerWorld, id: string, customerId: string, restaurantId = 'rest_a') {
  const events = decideCreate(
    initialReservation,
    createInput({ reservationId: id, restaurantId, customerId }),
    w.clock.now().toISOString(),
  );
  await w.events.append(reservationStream(id), events, NO_STREAM);
}

const relinks = async (w: CustomerWorld, id: string) =>
  (await w.events.readStream(reservationStream(id))).filter((e) => e.type === CUSTOMER_RELINKED);

t('a merge relinks every reservation of the absorbed customer, across batches, once', async ({ w }) => {
  const dup = await customer(w, 'Dup');
  const kept = await customer(w, 'Kept');
  const n = RELINK_BATCH * 2 + 3;
  for (let i = 0; i < n; i++) await book(w, `res_dup_${i}`, dup);
  await book(w, 'res_kept', kept);
  // Another restaurant's reservation naming the same id (ids are free text there): not touched.
  await book(w, 'res_elsewhere', dup, 'rest_b');
  w.clock.advance(60);
  const out = await mergeCustomers(w, dup, kept, w.meta);
  assert.is(out.relinked.relinked, n);
  for (let i = 0; i < n; i++) assert.is((await relinks(w, `res_dup_${i}`)).length, 1, `res_dup_${i}`);
  assert.is((await relinks(w, 'res_kept')).length, 0);
  assert.is((await relinks(w, 'res_elsewhere')).length, 0);
  await w.settle();
  const moved = await w.docs
    .collection(RESERVATIONS)
    .count({ updated_at: w.clock.now().toISOString(), customer_id: dup });
  assert.is(moved, n, 'the read model moved updated_at, kept the link');

  const again = await mergeCustomers(w, dup, kept, w.meta);
  assert.is(again.relinked.relinked, 0);

  // Deleting the survivor: its own reservation and the absorbed one's now show nobody.
  w.clock.advance(60);
  const deleted = await deleteCustomer(w, kept, null, w.meta);
  assert.is(deleted.relinked?.relinked, n + 1);
  const last = (await relinks(w, 'res_dup_0')).at(-1);
  assert.equal(last?.data.changes, { customer_id: null });
  assert.equal(last?.data.previous, { customer_id: kept });
  assert.is((await deleteCustomer(w, kept, null, w.meta)).relinked?.relinked, 0, 'run again: nothing');
});

/** The world's log, its appends to `failing` refused (another process's writes, the log unavailable). */
function refusing(w: CustomerWorld, failing: string): EventStore {
  const events = w.events;
  return {
    kind: events.kind,
    append: (stream, batch, expected, options) =>
      stream === failing
        ? Promise.reject(new Error('log unavailable'))
        : events.append(stream, batch, expected, options),
    readStream: (s, o) => events.readStream(s, o),
    readAll: (o) => events.readAll(o),
    subscribe: (o) => events.subscribe(o),
    headPosition: () => events.headPosition(),
    close: () => events.close(),
  };
}

const warnings = () => {
  const lines: string[] = [];
  const logger = { warn: (...args: unknown[]) => void lines.push(String(args[1])) } as unknown as Pick<
    Logger,
    'warn'
  >;
  return { lines, logger };
};

t(
  'one reservation failing: the others, later batches included, record the change; it is counted and told',
  async ({ w }) => {
    const dup = await customer(w, 'Dup');
    const kept = await customer(w, 'Kept');
    const n = RELINK_BATCH * 2 + 3;
    for (let i = 0; i < n; i++) await book(w, `res_dup_${i}`, dup);
    w.clock.advance(60);
    const { lines, logger } = warnings();
    const out = await mergeCustomers(
      { ...w, events: refusing(w, reservationStream('res_dup_1')), logger },
      dup,
      kept,
      w.meta,
    );
    assert.is(out.relinked.relinked, n - 1);
    assert.is(out.relinked.failed, 1);
    assert.is((await relinks(w, 'res_dup_1')).length, 0);
    assert.is((await relinks(w, `res_dup_${n - 1}`)).length, 1, 'the last batch ran');
    assert.is(lines.length, 1);
    assert.is(relinkLeftover(out.relinked), '1 reservation(s) not recorded: run the same command again');

    const again = await mergeCustomers(w, dup, kept, w.meta);
    assert.equal([again.relinked.relinked, again.relinked.failed], [1, 0]);
    assert.is(relinkLeftover(again.relinked), null);
  },
);

t('read models the bounded wait gave up on: the relink says so and warns', async ({ w }) => {
  const dup = await customer(w, 'Dup');
  const kept = await customer(w, 'Kept');
  await book(w, 'res_dup', dup);
  const { lines, logger } = warnings();
  const behind = {
    ...w,
    logger,
    settle: async () => {
      await w.settle();
      return false;
    },
  };
  const out = await mergeCustomers(behind, dup, kept, w.meta);
  assert.is(out.relinked.behind, true);
  assert.is(lines.length, 1);
  assert.match(relinkLeftover(out.relinked) ?? '', /read models were behind.*run the same command again/);
  const deleted = await deleteCustomer(behind, kept, null, w.meta);
  assert.is(deleted.relinked?.behind, true);
});

t(
  "a merge's relinks running after its survivor's deletion recorded its own: nothing stale",
  async ({ w }) => {
    const a = await customer(w, 'A');
    const b = await customer(w, 'B');
    await book(w, 'res_1', a);
    // The merge's customer steps only (its relinks find nothing: a crash before them, say).
    await mergeCustomers({ ...w, docs: new EmbeddedDocumentStore() }, a, b, w.meta);
    const deleted = await deleteCustomer(w, b, null, w.meta);
    assert.is(deleted.relinked?.relinked, 1);
    // The merge's own relinks at last (they were still running, or a slow process's).
    const late = await relinkReservations(
      w,
      { restaurantId: 'rest_a', customerId: a, linked: [a], into: b, reason: 'CUSTOMER_MERGED' },
      w.meta,
    );
    assert.is(late.relinked, 0);
    const told = (await relinks(w, 'res_1')).map(
      (e) =>
        `${(e.data.previous as { customer_id: string }).customer_id === b ? 'B' : '?'} -> ${
          (e.data.changes as { customer_id: string | null }).customer_id
        }`,
    );
    assert.equal(told, ['B -> null']);
  },
);

t.run();
