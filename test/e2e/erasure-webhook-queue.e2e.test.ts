// Right to erasure and a delivery waiting in the publisher's queue: an endpoint takes at most 8
// deliveries at a time, the others wait in memory with their body. One describing a customer erased
// while it waited must not be sent: before, it went out after the erasure, personal data included.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { runCli as cli } from '../helpers/cli-in-process';
import { create, startWebhooksService, TOKENS } from '../helpers/reservations';
import { orClose, type TestService } from '../helpers/service';

const t = suite('erasure: a delivery waiting in the queue');

const PERSONAL = /Lovelace|ada@example\.test/;

/** A receiver that holds every answer until released. */
async function gatedReceiver() {
  const bodies: string[] = [];
  const held: ServerResponse[] = [];
  let open = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      bodies.push(body);
      if (open) res.end('ok');
      else held.push(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    release() {
      open = true;
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Waits for the condition; the bound (~120 s) only catches a hang (CONTRIBUTING: how a test waits). */
async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 4_800; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

const deliveryOf = async (svc: TestService, type: string, count = 1) => {
  await svc.rt.projections.catchUp();
  const docs = await svc.rt.docs
    .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
    .find({ event_type: type });
  return docs.length >= count ? docs : undefined;
};

const customer = async (svc: TestService, name: string, email?: string) => {
  const made = await svc.api('POST', '/customers', {
    token: TOKENS.full,
    body: { name, ...(email ? { email } : {}), on_match: 'create_new' },
  });
  assert.is(made.status, 201, made.text);
  return made.body.data.id as string;
};

/** The delivery `id` once it is no longer pending. */
const deliveryEnded = (svc: TestService, id: string) =>
  until('the delivery ends', async () => {
    await svc.rt.projections.catchUp();
    const doc = await svc.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).findOne({ _id: id });
    return doc && doc.status !== 'pending' ? doc : undefined;
  });

/**
 * A reservation moved from customer A to B while the endpoint holds its every slot (eight deliveries:
 * A, B, the reservation, five more): the move's reservation.updated waits in the queue, `erase` erases
 * A meanwhile, then the endpoint answers again. The body the move was sent with, once delivered.
 */
async function queuedMoveOfErased(
  dirPrefix: string,
  erase: (svc: TestService, a: string) => Promise<unknown>,
): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), dirPrefix));
  const rx = await gatedReceiver();
  const svc = await orClose(startWebhooksService(dataDir), rx.close);
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', { token: TOKENS.full, body: { url: rx.url } });
    assert.is(ep.status, 201, ep.text);
    const a = await customer(svc, 'Ada Lovelace');
    const b = await customer(svc, 'Grace Hopper');
    const made = await create(svc, { customer: { id: a } });
    assert.is(made.status, 201, made.text);
    for (let i = 0; i < 5; i++) await customer(svc, `Guest ${i}`);
    await until('eight deliveries in flight', async () => (rx.bodies.length >= 8 ? true : undefined));
    const moved = await svc.api('PATCH', `/reservations/${made.body.data.id}`, {
      token: TOKENS.full,
      body: { customer: { id: b } },
    });
    assert.is(moved.status, 200, moved.text);
    const queued = (await until('the move', () => deliveryOf(svc, 'reservation.updated')))[0];
    assert.is(rx.bodies.length, 8, 'not sent');
    await erase(svc, a);
    rx.release();
    const done = await deliveryEnded(svc, queued?._id as string);
    assert.is(done.status, 'succeeded', `the delivery is ${done.status}`);
    const sent = rx.bodies.slice(8).find((body) => body.includes('"reservation.updated"'));
    assert.ok(sent, 'the move was sent');
    return sent as string;
  } finally {
    rx.release();
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

t('a queued delivery of a customer erased meanwhile is canceled, not sent', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-queue-'));
  const rx = await gatedReceiver();
  const svc = await orClose(startWebhooksService(dataDir), rx.close);
  try {
    const ep = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: rx.url, enabled_events: ['customer.created'] },
    });
    assert.is(ep.status, 201, ep.text);
    // Eight deliveries the endpoint holds: the endpoint's every slot is taken.
    for (let i = 0; i < 8; i++) await customer(svc, `Guest ${i}`);
    await until('eight deliveries in flight', async () => (rx.bodies.length >= 8 ? true : undefined));
    const ada = await customer(svc, 'Ada Lovelace', 'ada@example.test');
    // Her delivery is scheduled, and waits.
    const queued = (await until('her delivery', () => deliveryOf(svc, 'customer.created', 9))).find(
      (d) => d.customer_id === ada,
    );
    assert.ok(queued, 'her delivery waits in the queue');
    assert.is(rx.bodies.length, 8, 'not sent');
    await cli(svc, 'audit erase', { customer: ada });
    rx.release();
    const done = await deliveryEnded(svc, queued?._id as string);
    assert.is(done.status, 'canceled', `the delivery is ${done.status}`);
    assert.not.match(rx.bodies.join('\n'), PERSONAL, 'nothing of hers was sent');
  } finally {
    rx.release();
    await svc.close();
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t(
  'a queued delivery of a moved reservation whose previous customer is erased meanwhile is sent with them erased',
  async () => {
    // The body of a reservation given from A to B names A as the previous customer. Queued while A was
    // erased, it went out as read before the erasure, A's name included; it is read again from the log
    // (A erased in it, B's delivery still due).
    const sent = await queuedMoveOfErased('couvert-erasure-queue-move-', (svc, a) =>
      cli(svc, 'audit erase', { customer: a }),
    );
    assert.not.match(sent, /Lovelace/, "nothing of A's");
    assert.match(sent, /Grace Hopper/, "B's reservation");
    assert.match(sent, /"previous_attributes":\{[\s\S]*"name":"\[erased\]"/, 'A reads erased');
  },
);

t(
  'erased by another process (its deletion not read here yet): a queued move is sent with the previous customer erased',
  async () => {
    // Scaled out, another worker (or an operator's CLI) erases A: this publisher has not read A's
    // deletion, its erasure count did not move; it asks the key store before it sends.
    const sent = await queuedMoveOfErased('couvert-erasure-queue-other-', async (svc, a) => {
      // Another process's layer over the same log and key store destroys A's keys.
      const here = svc.rt.events as unknown as SealingEventStore;
      assert.ok(here instanceof SealingEventStore);
      await new SealingEventStore(here.inner, here.keys).erase(a);
    });
    assert.not.match(sent, /Lovelace/, "nothing of A's");
    assert.match(sent, /Grace Hopper/, "B's reservation");
  },
);

t.run();
