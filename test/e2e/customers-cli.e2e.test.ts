// The operator's customer commands, run against a live service: each changes what partners see, is
// safe to repeat, and leaves the events the webhook publisher will send.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerStream, webhookTypeOf } from '../../commands/customers/events';
import { CliUsageError } from '../../src/cli/registry';
import { ApiError } from '../../src/core/errors';
import { runCli as cli } from '../helpers/cli-in-process';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('customers: operator commands');
t.before(async (ctx) => {
  ctx.svc = await startCustomerService({ TEST_CLOCK: 'true' });
});
t.after(async ({ svc }) => svc.close());

const create = async (svc: TestService, body: Record<string, unknown>) =>
  (await svc.api('POST', '/customers', { token: TOKENS.write, body: { on_match: 'create_new', ...body } }))
    .body.data;
const get = (svc: TestService, id: string) => svc.api('GET', `/customers/${id}`, { token: TOKENS.read });

t('blacklist and clear, repeatable', async ({ svc }) => {
  const c = await create(svc, { name: 'Black' });
  assert.equal(await cli(svc, 'customers blacklist', { id: c.id, reason: 'three no-shows' }), [
    `customer ${c.id} blacklisted`,
  ]);
  assert.equal(await cli(svc, 'customers blacklist', { id: c.id }), [
    `customer ${c.id} was already blacklisted`,
  ]);
  assert.is((await get(svc, c.id)).body.data.blacklisted, true);
  await cli(svc, 'customers unblacklist', { id: c.id });
  assert.is((await get(svc, c.id)).body.data.blacklisted, false);
});

t('marketing opt-outs: added and removed per channel, and they move updated_at', async ({ svc }) => {
  const c = await create(svc, { name: 'Opt' });
  await svc.api('POST', '/__test/clock', { body: { advance_seconds: 10 } });
  await cli(svc, 'customers opt-out', { id: c.id, channel: 'whatsapp', reason: 'blocked' });
  await cli(svc, 'customers opt-out', { id: c.id, channel: 'EMAIL' });
  const after = (await get(svc, c.id)).body.data;
  assert.equal(after.marketing_opt_outs, ['EMAIL', 'WHATSAPP']);
  assert.ok(after.updated_at > c.updated_at);
  await cli(svc, 'customers opt-in', { id: c.id, channel: 'EMAIL' });
  assert.equal((await get(svc, c.id)).body.data.marketing_opt_outs, ['WHATSAPP']);
  let usage: unknown = null;
  try {
    await cli(svc, 'customers opt-out', { id: c.id, channel: 'SMS' });
  } catch (err) {
    usage = err;
  }
  assert.instance(usage, CliUsageError);
});

t('merge: the duplicate disappears and the survivor takes what it lacked', async ({ svc }) => {
  const kept = await create(svc, { name: 'Kept', email: 'kept@example.com' });
  const dup = await create(svc, { name: 'Dup', phone_number: '+33 6 44 44 44 44', tags: ['wine'] });
  assert.equal(await cli(svc, 'customers merge', { from: dup.id, into: kept.id }), [
    `merged ${dup.id} into ${kept.id}`,
  ]);
  assert.equal(await cli(svc, 'customers merge', { from: dup.id, into: kept.id }), [
    `customer ${dup.id} was already merged into ${kept.id}`,
  ]);
  assert.is((await get(svc, dup.id)).status, 404);
  const k = (await get(svc, kept.id)).body.data;
  assert.is(k.phone_number, '+33644444444');
  assert.equal(k.tags, ['wine']);
  // The phone now finds the survivor.
  const matched = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'x', phone_number: '0644444444' },
  });
  assert.is(matched.body.data.id, kept.id);
});

t('delete, draft and publish; an unknown customer is a 404', async ({ svc }) => {
  const c = await create(svc, { name: 'Gone' });
  await cli(svc, 'customers draft', { id: c.id, channel: 'WHATSAPP' });
  assert.is((await get(svc, c.id)).status, 404);
  const shown = JSON.parse((await cli(svc, 'customers show', { id: c.id })).join('\n'));
  assert.is(shown.draft, true);
  await cli(svc, 'customers publish', { id: c.id });
  assert.is((await get(svc, c.id)).status, 200);
  await cli(svc, 'customers delete', { id: c.id, reason: 'erasure request' });
  assert.is((await get(svc, c.id)).status, 404);
  let status = 0;
  try {
    await cli(svc, 'customers blacklist', { id: 'cus_unknown' });
  } catch (err) {
    status = err instanceof ApiError ? err.status : -1;
  }
  assert.is(status, 404);
});

t(
  'the log holds customer.created, updated, merged and deleted for the webhook publisher',
  async ({ svc }) => {
    const a = await create(svc, { name: 'Hook A' });
    const b = await create(svc, { name: 'Hook B' });
    await svc.api('PATCH', `/customers/${a.id}`, { token: TOKENS.write, body: { note: 'n' } });
    await cli(svc, 'customers merge', { from: b.id, into: a.id });
    await cli(svc, 'customers delete', { id: a.id });
    const types = async (id: string) =>
      (await svc.rt.events.readStream(customerStream(id))).map((e) => webhookTypeOf(e)).filter(Boolean);
    assert.equal(await types(a.id), [
      'customer.created',
      'customer.updated',
      'customer.merged',
      'customer.deleted',
    ]);
    assert.equal(await types(b.id), ['customer.created']);
    const [created] = await svc.rt.events.readStream(customerStream(a.id), { limit: 1 });
    assert.is(created?.metadata.restaurant_id, 'rest_fr');
    assert.is(created?.metadata.actor, 'credential:key_write');
  },
);

t.run();
