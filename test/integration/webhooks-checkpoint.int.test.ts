// The embedded webhook publisher's checkpoint (src/webhooks/runner.ts), with the real runner on a
// real embedded runtime: once the log goes quiet it reaches the last event handled within a bounded
// time, so a restart (even after SIGKILL) replays nothing; it never passes an event still being
// handled (its fan-out not yet durable); a graceful stop saves the last event handled.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fanoutStream } from '../../commands/webhook-deliveries/events';
import { createWebhookEndpoint, deleteWebhookEndpoint } from '../../commands/webhook-endpoints/handler';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { operatorMeta } from '../../src/core/command-meta';
import { positionFromString, type RecordedEvent } from '../../src/ports/event-store';
import type { Runtime } from '../../src/runtime';
import { PUBLISHER_EVENT_PREFIXES } from '../../src/webhooks/publisher';
import {
  CHECKPOINT_FILE,
  CHECKPOINT_IDLE_MS,
  type RunningWebhooks,
  startWebhooks,
} from '../../src/webhooks/runner';
import type { Receiver } from '../helpers/webhook-receiver';
import { demoCustomer, startWebhooksWorld, until, type WebhooksWorld } from '../helpers/webhooks-world';

/** What a loaded machine may add to the bound (timers late, the event loop busy): still far below a restart's replay. */
const SLACK_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Ctx {
  dir: string;
  rt: Runtime;
  rx: Receiver;
  running: RunningWebhooks;
  world: WebhooksWorld;
  /** Positions whose handle() resolved, and when, in the runner started last. */
  handled: { position: bigint; at: number }[];
}

const t = suite<Ctx>('webhooks: the publisher checkpoint (embedded)');

/** Starts the real runner and records every event it finishes handling. */
function start(ctx: Ctx): void {
  ctx.running = startWebhooks(ctx.rt);
  ctx.handled = [];
  const publisher = ctx.running.publisher;
  const handle = publisher.handle.bind(publisher);
  // Before the runner's first event: startWebhooks returns before its subscription yields anything.
  publisher.handle = async (event: RecordedEvent) => {
    await handle(event);
    ctx.handled.push({ position: event.position, at: Date.now() });
  };
}

const stored = (ctx: Ctx): bigint => {
  const raw = readFileSync(join(ctx.dir, CHECKPOINT_FILE), 'utf8').trim();
  return positionFromString(raw);
};

/** The log's last event the publisher follows (its checkpoint's goal once quiet). */
async function lastPublisherEvent(rt: Runtime): Promise<bigint> {
  let last: bigint | null = null;
  for await (const e of rt.events.readAll())
    if (PUBLISHER_EVENT_PREFIXES.some((p) => e.type.startsWith(p))) last = e.position;
  assert.ok(last !== null, 'the publisher has events to follow');
  return last as bigint;
}

const customers = (rt: Runtime, names: string[]) => Promise.all(names.map((name) => demoCustomer(rt, name)));

t.before(async (ctx) => {
  ctx.world = await startWebhooksWorld({
    name: 'webhooks-checkpoint',
    key: { id: 'key_cp', token: 'couvert_pk_checkpoint_0000000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_cp', path: '/cp', secret: 'whsec_checkpoint_test_secret_0001' },
    // Started here, recording what it handles.
    publisher: false,
  });
  ctx.dir = ctx.world.dir;
  ctx.rt = ctx.world.rt;
  ctx.rx = ctx.world.rx;
  start(ctx);
});

t.after(async (ctx) => {
  await ctx.running?.stop();
  await ctx.world?.close();
});

// First, while the log holds nothing the publisher follows after the endpoint's creation (where a
// first start begins): a stop that left the runner subscribed would wait for an event forever.
t('a stop during the first start (no checkpoint yet) returns, on a quiet log', async (ctx) => {
  await ctx.running.stop();
  rmSync(join(ctx.dir, CHECKPOINT_FILE), { force: true });
  start(ctx);
  // At once: the runner is still finding where to start (firstStart), with nothing to close yet.
  const stopped = ctx.running.stop().then(() => true);
  const late = sleep(3_000 + SLACK_MS).then(() => false);
  const returned = await Promise.race([stopped, late]);
  // A stop that never returns is left behind, not awaited again by the suite's end.
  if (!returned) ctx.running = { ...ctx.running, stop: async () => undefined };
  assert.ok(returned, 'the stop returned');
  start(ctx);
});

t(
  'after a burst, once the log is quiet, the checkpoint reaches the last event handled in bounded time',
  async (ctx) => {
    // Quiet first, so the burst's first event is saved at once and the rest come within 100 ms of it:
    // only a save once the log is quiet brings the checkpoint to the burst's end.
    await sleep(250);
    const names = Array.from({ length: 8 }, (_, i) => `Burst ${i}`);
    await customers(ctx.rt, names);
    const last = await lastPublisherEvent(ctx.rt);
    await until('every event of the burst handled', 120_000, () => ctx.handled.at(-1)?.position === last);
    const handledAt = (ctx.handled.at(-1) as { at: number }).at;
    const deadline = handledAt + CHECKPOINT_IDLE_MS + SLACK_MS;
    while (stored(ctx) !== last && Date.now() < deadline) await sleep(5);
    assert.is(
      stored(ctx),
      last,
      `checkpoint ${stored(ctx)} still short of the last event handled (${last}) ${Date.now() - handledAt} ms after it`,
    );
    // Never ahead of the fan-outs: every event up to it was fanned out (one delivery each, to the one endpoint).
    await ctx.rx.waitFor('/cp', names.length);
    for await (const e of ctx.rt.events.readAll())
      if (e.type === 'CustomerCreated' && e.position <= last) {
        const [fanout] = await ctx.rt.events.readStream(fanoutStream(e.id), { limit: 1 });
        assert.is(fanout?.type, 'WebhookDeliveriesScheduled', `fan-out of ${e.position}`);
      }
  },
);

t('a restart after the quiet (even after SIGKILL) replays nothing', async (ctx) => {
  // The log has been quiet for the checkpoint's bound (the last test waited for the burst's end).
  const last = await lastPublisherEvent(ctx.rt);
  const quietUntil = Date.now() + CHECKPOINT_IDLE_MS + SLACK_MS;
  while (stored(ctx) !== last && Date.now() < quietUntil) await sleep(10);
  // What a SIGKILL now would leave: the graceful stop below may save again, so its file is put back.
  const atKill = readFileSync(join(ctx.dir, CHECKPOINT_FILE), 'utf8');
  await ctx.running.stop();
  writeFileSync(join(ctx.dir, CHECKPOINT_FILE), atKill);
  const sent = ctx.rx.for('/cp').length;
  start(ctx);
  await sleep(600);
  assert.equal(
    ctx.handled.map((h) => h.position),
    [],
    'the restarted publisher handled events it had handled before the quiet',
  );
  // It does follow the log: the next event is handled (and sent once).
  await customers(ctx.rt, ['After Restart']);
  const next = await lastPublisherEvent(ctx.rt);
  await until('the new event handled', 120_000, () => ctx.handled.some((h) => h.position === next));
  assert.equal(
    ctx.handled.map((h) => h.position),
    [next],
  );
  await ctx.rx.waitFor('/cp', sent + 1);
});

t('the checkpoint never passes an event still being handled (its fan-out not yet appended)', async (ctx) => {
  const publisher = ctx.running.publisher;
  const handle = publisher.handle;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let entered: bigint | null = null;
  publisher.handle = async (event: RecordedEvent) => {
    entered = event.position;
    await gate;
    return handle(event);
  };
  try {
    // The last test's event is saved (a save runs beside the handling: it may still be in progress).
    const before = await lastPublisherEvent(ctx.rt);
    await until('the last event saved', 120_000, () => stored(ctx) === before);
    await customers(ctx.rt, ['Held']);
    await until('the event taken by the publisher', 120_000, () => entered !== null);
    // Longer than any save's timer: the runner is idle apart from this one event.
    await sleep(CHECKPOINT_IDLE_MS * 3);
    assert.is(
      stored(ctx),
      before,
      `saved past an event whose handling had not finished (entered ${entered}, handled ${ctx.handled.map((h) => h.position)})`,
    );
    let held: RecordedEvent | undefined;
    for await (const e of ctx.rt.events.readAll()) if (e.position === entered) held = e;
    const [fanout] = await ctx.rt.events.readStream(fanoutStream((held as RecordedEvent).id), { limit: 1 });
    assert.is(fanout, undefined, 'the held event is not fanned out yet');
  } finally {
    release();
  }
  await until(
    'the held event saved once handled',
    CHECKPOINT_IDLE_MS + SLACK_MS + 5_000,
    () => stored(ctx) === entered,
  );
  publisher.handle = handle;
});

t('a graceful stop saves the last event handled', async (ctx) => {
  await sleep(250);
  // The first is saved at once (the log was quiet), the second left to the timer: the stop saves it.
  await customers(ctx.rt, ['Stop One', 'Stop Two']);
  const last = await lastPublisherEvent(ctx.rt);
  await until('both handled', 120_000, () => ctx.handled.at(-1)?.position === last);
  await ctx.running.stop();
  assert.is(stored(ctx), last);
  start(ctx);
});

t('a save is durable: the position is synced before the rename, the directory after it', async (ctx) => {
  const file = join(ctx.dir, CHECKPOINT_FILE);
  const temporary = `${file}.tmp`;
  // Every FileHandle shares this prototype: the runner's saves go through its sync().
  const probe = await open(file, 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const original = proto.sync;
  const seen: { temporary: string | null; file: string }[] = [];
  proto.sync = async function (this: unknown) {
    await original.call(this);
    seen.push({
      temporary: existsSync(temporary) ? readFileSync(temporary, 'utf8') : null,
      file: readFileSync(file, 'utf8'),
    });
  };
  try {
    await sleep(250);
    await customers(ctx.rt, ['Durable']);
    const last = await lastPublisherEvent(ctx.rt);
    await until('the event saved', 120_000, () => stored(ctx) === last);
    await until('the save finished', 120_000, () => seen.some((s) => s.temporary === null));
  } finally {
    proto.sync = original;
  }
  const last = (await lastPublisherEvent(ctx.rt)).toString().padStart(20, '0');
  const before = seen.findIndex((s) => s.temporary === last && s.file !== last);
  const after = seen.findIndex((s, i) => i > before && s.temporary === null && s.file === last);
  assert.ok(before >= 0, `the new position synced before the rename: ${JSON.stringify(seen)}`);
  assert.ok(after > before, `a sync (the directory's) after the rename: ${JSON.stringify(seen)}`);
});

// Last: it deletes the endpoint the earlier tests deliver to.
t(
  "an empty or cut-short checkpoint file starts as a first start does, not from the log's beginning",
  async (ctx) => {
    // The oldest endpoint is made newer than every event of the earlier tests: a first start begins
    // there, a replay of the whole log before it.
    const made = await createWebhookEndpoint(
      ctx.rt,
      {
        restaurantId: 'rest_demo',
        url: ctx.rx.url('/cp2'),
        credential: { id: 'key_cp', scopes: ['CUSTOMERS_READ'] },
      },
      operatorMeta('test'),
    );
    await ctx.rt.settle(made.position);
    await ctx.rt.settle(
      (await deleteWebhookEndpoint(ctx.rt, null, 'we_cp', 'DELETED', operatorMeta('test'))).position,
    );
    const [oldest] = await ctx.rt.docs
      .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
      .find({}, { sort: { created_position: 1 }, limit: 1 });
    assert.is(oldest?._id, made.endpointId);
    const from = positionFromString((oldest as WebhookEndpointDoc).created_position);
    for (const [i, content] of ['', '\n', '0000000000', '\0\0\0\0'].entries()) {
      await ctx.running.stop();
      writeFileSync(join(ctx.dir, CHECKPOINT_FILE), content);
      start(ctx);
      await customers(ctx.rt, [`After Bad File ${i}`]);
      const next = await lastPublisherEvent(ctx.rt);
      await until('the new event handled', 120_000, () => ctx.handled.some((h) => h.position === next));
      const early = ctx.handled.filter((h) => h.position <= from).map((h) => h.position);
      assert.equal(early, [], `${JSON.stringify(content)}: handled events before the oldest endpoint`);
      await ctx.rx.waitFor('/cp2', i + 1);
      await until('saved again', 120_000, () => stored(ctx) === next);
    }
  },
);

t.run();
