// A legacy endpoint receives every reservation change (docs/WEBHOOKS.md): the customer a reservation
// shows changed by a merge is one, sent as RESERVATION_UPDATED with the fields that changed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeCustomers } from '../../commands/customers/merge';
import { decideCreate } from '../../commands/reservations/decide-create';
import { reservationStream } from '../../commands/reservations/events';
import { initialReservation } from '../../commands/reservations/evolve';
import { FixedClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { NO_STREAM } from '../../src/ports/event-store';
import { createInput } from '../helpers/reservation-input';
import { demoCustomer, startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: a legacy endpoint and a merge');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-legacy-relink',
    clock: new FixedClock('2026-06-02T10:00:00.000Z'),
    key: {
      id: 'key_lr',
      token: 'couvert_pk_legacy_relink_0000000000000001',
      scopes: ['RESERVATIONS_READ', 'CUSTOMERS_READ'],
    },
    endpoint: { id: 'we_lr', path: '/lr', secret: 'whsec_legacy_relink_000000000001', api_version: 'legacy' },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('the merge sends RESERVATION_UPDATED naming customer and updated_at', async ({ w }) => {
  const dup = await demoCustomer(w.rt, 'Dup Guest');
  const kept = await demoCustomer(w.rt, 'Kept Guest');
  const id = 'res_legacy_relink';
  await w.rt.events.append(
    reservationStream(id),
    decideCreate(
      initialReservation,
      createInput({ reservationId: id, restaurantId: 'rest_demo', customerId: dup }),
      w.clock.now().toISOString(),
    ),
    NO_STREAM,
  );
  await w.rx.waitFor('/lr', 1);
  w.clock.advance(60);
  const out = await mergeCustomers(w.rt, dup, kept, operatorMeta('test'));
  assert.is(out.relinked.relinked, 1);
  const [created, updated] = await w.rx.waitFor('/lr', 2);
  assert.is(created?.json.data.change, 'created');
  assert.is(updated?.json.type, 'RESERVATION_UPDATED');
  assert.is(updated?.json.data.change, 'updated');
  assert.equal(updated?.json.data.changed_fields, ['customer', 'updated_at']);
  assert.is(updated?.json.data.reservation.customer.id, kept);
  assert.is(updated?.json.data.reservation.customer.name, 'Kept Guest');
});

t.run();
