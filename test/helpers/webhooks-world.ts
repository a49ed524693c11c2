// The webhooks integration suites' world: a runtime with the `webhooks` role on a data directory of its
// own, loopback targets allowed, a receiver on loopback, an API key of the demo restaurant and one
// endpoint of it (from a bootstrap file, as an operator would add it), the publisher following the log.
// Each suite says what differs (the key's scopes, the endpoint's path and format, a frozen clock, the
// publisher's options) and how the world ends (`close`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { createCustomer } from '../../commands/customers/handler';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { applyBootstrap } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import type { Filter } from '../../src/ports/document-store';
import { createRuntime, type Runtime } from '../../src/runtime';
import type { PublisherOptions } from '../../src/webhooks/publisher';
import { type RunningWebhooks, startWebhooks } from '../../src/webhooks/runner';
import { demoBootstrap, orClose } from './service';
import { type Receiver, startReceiver } from './webhook-receiver';

export interface WebhooksWorld {
  dir: string;
  rt: Runtime;
  rx: Receiver;
  /** The publisher (null when the suite starts it itself: `publisher: false`). */
  running: RunningWebhooks | null;
  /** Stops the publisher, the runtime and the receiver, and removes the data directory. */
  close(): Promise<void>;
}

export interface WorldOptions<C extends Clock | undefined> {
  /** Names the data directory (`couvert-<name>-…`). */
  name: string;
  /** The service clock (a FixedClock freezes retries: only the test moves them); the real one by default. */
  clock?: C;
  /** The demo restaurant's API key the endpoint belongs to. */
  key: { id: string; token: string; scopes: string[] };
  /** The endpoint, at `rx.url(path)`; v1 unless said. Null: no endpoint (the suite makes its own). */
  endpoint: { id: string; path: string; secret: string; api_version?: 'v1' | 'legacy' } | null;
  /** The publisher's options (`concurrencyPerEndpoint`…), or false to leave it to the suite. */
  publisher?: PublisherOptions | false;
}

export async function startWebhooksWorld<C extends Clock | undefined = undefined>(
  o: WorldOptions<C>,
): Promise<WebhooksWorld & { clock: C }> {
  // The bootstrap file's webhook_endpoints section is the webhooks module's.
  registerModules();
  const dir = mkdtempSync(join(tmpdir(), `couvert-${o.name}-`));
  const rx = await startReceiver();
  const config = loadConfig({
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    ROLES: 'webhooks',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  });
  // A failed start closes the receiver (else it holds the file's process open to the runner's kill).
  const rt = await orClose(
    createRuntime(config, {
      logger: createLogger('silent'),
      ...(o.clock ? { clock: o.clock } : {}),
    }),
    () => rx.close(),
  );
  const bootstrap = demoBootstrap({}, [o.key]);
  if (o.endpoint)
    (bootstrap.restaurants[0] as Record<string, unknown>).webhook_endpoints = [
      {
        id: o.endpoint.id,
        url: rx.url(o.endpoint.path),
        api_version: o.endpoint.api_version ?? 'v1',
        secret: o.endpoint.secret,
        api_key_id: o.key.id,
      },
    ];
  await orClose(
    applyBootstrap(rt, bootstrap, operatorMeta('bootstrap')).then((b) => rt.settle(b.position)),
    () => rt.close(),
    () => rx.close(),
  );
  const running = o.publisher === false ? null : startWebhooks(rt, o.publisher ?? {});
  const world: WebhooksWorld & { clock: C } = {
    dir,
    rt,
    rx,
    running,
    clock: o.clock as C,
    async close() {
      await world.running?.stop();
      await rt.close();
      await rx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `probe` every 10 ms until it gives a value (true, a document…), for up to `ms`; fails naming
 * `what` otherwise. Resolves with that value. `ms` bounds a hang only (suites pass 120 s, under the
 * runner's 300 s per file): a loaded CI machine is slow, so it is never a measure of speed.
 */
export async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== null && got !== undefined && got !== false) return got;
    if (Date.now() > deadline) assert.unreachable(what);
    await sleep(10);
  }
}

/** The deliveries matching `filter`, as the read models have them once the process's appends are in. */
export async function deliveries(rt: Runtime, filter: Filter = {}): Promise<WebhookDeliveryDoc[]> {
  await rt.refresh();
  return rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES).find(filter, { sort: { created_at: 1 } });
}

/** A customer of the demo restaurant (no matching): a customer.created for its endpoints. */
export const demoCustomer = async (rt: Runtime, name: string, email?: string): Promise<string> =>
  (
    await createCustomer(
      rt,
      { _id: 'rest_demo', country_code: 'FR', customer_matching: false },
      { name, ...(email ? { email } : {}) },
      operatorMeta('test'),
    )
  ).customerId as string;
