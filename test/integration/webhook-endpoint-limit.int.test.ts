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
import { SEEDING_STREAM, takeEndpointSlot } from '../../commands/webhook-endpoints/limit-handler';
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

t(
  'a fixed id whose slot was fenced but never released (the fencing take died) is created when retried',
  async () => {
    const d = deps();
    // A start applying a bootstrap file (or the demo) took the slot of its fixed id and died.
    const ghost = await takeEndpointSlot(d, R, 'we_fixed', null, meta);
    // A take at the limit fenced that creation, then died (or lost its race) before the release.
    await d.events.append(
      webhookEndpointStream('we_fixed'),
      [
        {
          type: 'WebhookEndpointAbandoned',
          data: { endpoint_id: 'we_fixed', restaurant_id: R, slot_revision: ghost.revision, at: 'x' },
        },
      ],
      'no_stream',
    );
    const input = {
      restaurantId: R,
      url: 'https://example.com/fixed',
      endpointId: 'we_fixed',
      credential: { id: 'key_1', scopes: ['CUSTOMERS_READ'] },
    };
    // The next start retries the creation with the same id: made, with a slot of its own.
    const made = await createWebhookEndpoint(d, { ...input, beyondLimit: true }, meta);
    assert.equal(
      made.appended.map((e) => e.type),
      ['WebhookEndpointCreated'],
    );
    const slots = await d.events.readStream(endpointSlotsStream(R));
    assert.equal(
      slots.map((e) => [e.type, e.data.endpoint_id]),
      [
        ['WebhookEndpointSlotTaken', 'we_fixed'],
        ['WebhookEndpointSlotReleased', 'we_fixed'],
        ['WebhookEndpointSlotTaken', 'we_fixed'],
      ],
    );
    // It counts once: 19 more fill the restaurant.
    for (let i = 0; i < 19; i++) await create(d, i);
    await refused(create(d, 'full'));
    // Created again (the same start retried once more): nothing more appended.
    assert.is((await createWebhookEndpoint(d, input, meta)).appended.length, 0);
    assert.is((await d.events.readStream(endpointSlotsStream(R))).length, slots.length + 19);
  },
);

/** An endpoint as a store written before slots holds it: its own events only. */
async function oldEndpoint(d: EndpointDeps, id: string, restaurantId: string, deleted = false) {
  const base = { endpoint_id: id, restaurant_id: restaurantId, at: '2026-01-01T00:00:00.000Z' };
  await d.events.append(
    webhookEndpointStream(id),
    [
      {
        type: 'WebhookEndpointCreated',
        data: {
          ...base,
          credential_id: 'key_1',
          owner: 'key:key_1',
          api_version: 'v1',
          url: `https://example.com/${id}`,
          description: null,
          enabled_events: ['*'],
          headers: {},
          disabled: false,
          secret: 'sealed',
        },
      },
      ...(deleted
        ? [{ type: 'WebhookEndpointDeleted', data: { ...base, reason: 'DELETED', credential_id: 'key_1' } }]
        : []),
    ],
    'no_stream',
  );
}

t('a log written before slots is seeded once, for every restaurant: its live endpoints count', async () => {
  const d = deps();
  for (let i = 0; i < 20; i++) await oldEndpoint(d, `we_a${i}`, R, i === 7);
  for (let i = 0; i < 20; i++) await oldEndpoint(d, `we_b${i}`, 'rest_b');
  await create(d, 'a-20th');
  await refused(create(d, 'a-21st'));
  // rest_b was seeded by the same pass: already full.
  await refused(create(d, 'b-21st', 'rest_b'));
  const [seedB] = await d.events.readStream(endpointSlotsStream('rest_b'));
  assert.is(seedB?.type, 'WebhookEndpointSlotsSeeded');
  assert.is((seedB?.data.endpoint_ids as string[] | undefined)?.length, 20);
  const [seedA] = await d.events.readStream(endpointSlotsStream(R));
  assert.equal(
    (seedA?.data.endpoint_ids as string[] | undefined)?.includes('we_a7'),
    false,
    'a deleted endpoint holds no slot',
  );
  assert.is((await d.events.readStream(SEEDING_STREAM)).length, 1);
  // Once seeded, a restaurant without a stream has no endpoint: its stream starts with its first take.
  await create(d, 'c-first', 'rest_c');
  const c = await d.events.readStream(endpointSlotsStream('rest_c'));
  assert.equal(
    c.map((e) => e.type),
    ['WebhookEndpointSlotTaken'],
  );
  assert.is((await d.events.readStream(SEEDING_STREAM)).length, 1, 'seeded once');
});

t(
  'a take reads only the slot events appended since its last fold, however long the stream grew',
  async () => {
    const d = deps();
    for (let i = 0; i < 15; i++) {
      const made = await create(d, `churn-${i}`);
      await deleteWebhookEndpoint(d, R, made.endpointId, 'DELETED', meta);
    }
    const slots = endpointSlotsStream(R);
    const length = (await d.events.readStream(slots)).length;
    assert.ok(length >= 30, `the stream grew (${length} events)`);
    const read: number[] = [];
    const inner = d.events.readStream.bind(d.events);
    d.events.readStream = async (stream, options) => {
      const got = await inner(stream, options);
      if (stream === slots) read.push(got.length);
      return got;
    };
    await create(d, 'after-churn');
    assert.ok(read.length > 0 && read.every((n) => n <= 2), `slot events read: ${read.join(', ')}`);
    // What it decided with is the whole stream's fold: 19 more fit, the 21st does not.
    for (let i = 0; i < 19; i++) await create(d, `fill-${i}`);
    await refused(create(d, 'one-too-many'));
  },
);

t.run();
