// The webhook endpoint limit's handlers on a store (commands/webhook-endpoints/limit-handler.ts): many
// creates at once, and what a process dying between the slot stream and the endpoint's stream leaves:
// never a 21st endpoint, never a slot held for good.
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  decideCreateEndpoint,
  evolveEndpoint,
  initialEndpoint,
} from '../../commands/webhook-endpoints/decide';
import { webhookEndpointStream } from '../../commands/webhook-endpoints/events';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  type EndpointDeps,
} from '../../commands/webhook-endpoints/handler';
import { ABANDONED_AFTER_MS, endpointSlotsStream } from '../../commands/webhook-endpoints/limit';
import { takeEndpointSlot } from '../../commands/webhook-endpoints/limit-handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { runCommand } from '../../src/core/command';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError, BusinessRuleError } from '../../src/core/errors';
import { SecretBox } from '../../src/secrets';

const t = suite('webhook endpoint limit: handlers');
const R = 'rest_a';
const meta = operatorMeta('test');

function deps(): EndpointDeps & { clock: FixedClock } {
  const clock = new FixedClock('2026-06-02T10:00:00.000Z');
  return {
    events: new MemoryEventStore({ clock }),
    clock,
    secrets: new SecretBox(randomBytes(32)),
    config: { webhookAllowPrivateTargets: false },
  };
}

const create = (d: EndpointDeps, n: number | string, restaurantId = R) =>
  createWebhookEndpoint(
    d,
    {
      restaurantId,
      url: `https://example.com/${n}`,
      credential: { id: 'key_1', scopes: ['CUSTOMERS_READ'] },
    },
    { ...meta, restaurant_id: restaurantId },
  );

const isLimit = (err: unknown) => err instanceof BusinessRuleError && err.reason === 'ENDPOINT_LIMIT_REACHED';

async function refused(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.ok(isLimit(err), String(err));
    return;
  }
  assert.unreachable('the create was not refused');
}

async function twenty(d: EndpointDeps): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push((await create(d, i)).endpointId);
  return ids;
}

t('30 creates at once from none: exactly 20 endpoints, the rest refused by the limit', async () => {
  const d = deps();
  const outcomes = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => create(d, i)));
  const made = outcomes.filter((o) => o.status === 'fulfilled');
  assert.is(made.length, 20);
  for (const o of outcomes) if (o.status === 'rejected') assert.ok(isLimit(o.reason), String(o.reason));
  // Another restaurant has slots of its own.
  assert.ok((await create(d, 'other', 'rest_b')).endpointId);
});

t(
  'every deletion gives its slot back: by its owner, and a revoked credential’s (any restaurant)',
  async () => {
    const d = deps();
    const ids = await twenty(d);
    await refused(create(d, 'full'));
    await deleteWebhookEndpoint(d, R, ids[0] as string, 'DELETED', meta);
    // Released by the deletion itself, not left to the next create at the limit.
    const [last] = await d.events.readStream(endpointSlotsStream(R), { direction: 'backwards', limit: 1 });
    assert.equal(
      [last?.type, last?.data.endpoint_id, last?.data.reason],
      ['WebhookEndpointSlotReleased', ids[0], 'DELETED'],
    );
    await create(d, 'again');
    await refused(create(d, 'full-again'));
    // What the publisher does for a revoked credential's endpoints (restaurant null).
    await deleteWebhookEndpoint(d, null, ids[1] as string, 'CREDENTIAL_REVOKED', meta);
    const [revoked] = await d.events.readStream(endpointSlotsStream(R), { direction: 'backwards', limit: 1 });
    assert.equal([revoked?.type, revoked?.data.endpoint_id], ['WebhookEndpointSlotReleased', ids[1]]);
    await create(d, 'after-revocation');
    await refused(create(d, 'full-at-last'));
  },
);

t('died between the deletion and the release: the next create at the limit releases it', async () => {
  const d = deps();
  const ids = await twenty(d);
  const id = ids[3] as string;
  // The deletion landed; its process died before the release.
  await d.events.append(
    webhookEndpointStream(id),
    [
      {
        type: 'WebhookEndpointDeleted',
        data: { endpoint_id: id, restaurant_id: R, reason: 'DELETED', credential_id: 'key_1', at: 'x' },
      },
    ],
    0,
  );
  await create(d, 'instead');
  const released = (await d.events.readStream(endpointSlotsStream(R))).filter(
    (e) => e.type === 'WebhookEndpointSlotReleased',
  );
  assert.equal(
    released.map((e) => [e.data.endpoint_id, e.data.reason]),
    [[id, 'ENDPOINT_DELETED']],
  );
  await refused(create(d, 'full'));
  // Deleting it again (the operator retrying) appends no second release.
  await deleteWebhookEndpoint(d, R, id, 'DELETED', meta);
  await refused(create(d, 'still-full'));
});

t(
  'died between the slot and the creation: refused for ABANDONED_AFTER_MS, then fenced and freed',
  async () => {
    const d = deps();
    const ids = await twenty(d);
    await deleteWebhookEndpoint(d, R, ids[0] as string, 'DELETED', meta);
    // A create took the 20th slot and died before WebhookEndpointCreated.
    const ghost = await takeEndpointSlot(d, R, 'we_ghost', 20, meta);
    await refused(create(d, 'while-it-may-come'));
    d.clock.advance(ABANDONED_AFTER_MS / 1000 - 1);
    await refused(create(d, 'still-within'));
    d.clock.advance(1);
    await create(d, 'after');
    await refused(create(d, 'full'));
    const fence = await d.events.readStream(webhookEndpointStream('we_ghost'));
    assert.equal(
      fence.map((e) => [e.type, e.data.slot_revision]),
      [['WebhookEndpointAbandoned', ghost.revision]],
    );
    // The dead create's process comes back and appends its creation: refused, the fence holds.
    try {
      await runCommand(d.events, {
        stream: webhookEndpointStream('we_ghost'),
        initial: initialEndpoint,
        evolve: evolveEndpoint,
        metadata: meta,
        clock: d.clock,
        decide: (s) =>
          decideCreateEndpoint(
            s,
            {
              endpoint_id: 'we_ghost',
              restaurant_id: R,
              credential_id: 'key_1',
              owner: 'key:key_1',
              api_version: 'v1',
              url: 'https://example.com/ghost',
              description: null,
              enabled_events: ['*'],
              headers: {},
              disabled: false,
              secret: 'sealed',
              at: 'x',
            },
            ghost.revision,
          ),
      });
      assert.unreachable('the late creation landed');
    } catch (err) {
      assert.instance(err, ApiError);
      assert.is((err as ApiError).status, 409);
    }
  },
);

t.run();
