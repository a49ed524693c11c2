// A webhook receiver on loopback: records every request (headers, raw body, arrival time) and answers
// what the test scripts per path (a status sequence, a delay).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import type { Clock } from '../../src/core/clock';
import type { Runtime } from '../../src/runtime';
import { PUBLISHER_EVENT_PREFIXES } from '../../src/webhooks/publisher';
import type { RunningWebhooks } from '../../src/webhooks/runner';
import { REQUEST_HANG_MS } from './service';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
  at: number;
}

export interface Script {
  /** Statuses answered in turn; the last one repeats. Default [200]. */
  statuses?: number[];
  delayMs?: number;
  /**
   * The answer waits until this settles (after `delayMs`): a test holds an attempt in flight for as
   * long as it needs (`hold()` below makes one), whatever the machine's speed, instead of timing it.
   */
  until?: Promise<unknown>;
  headers?: Record<string, string>;
  /** The answer's body (default "ok", or "status N" for a non-2xx). */
  body?: (request: Received) => string;
}

export interface Receiver {
  url(path: string): string;
  received: Received[];
  on(path: string, script: Script): void;
  /**
   * Resolves with the requests for `path` once there are `count`. `timeoutMs` (default 120 s) only
   * bounds a hang, well under the runner's 300 s per file: never a measure of speed (a loaded CI
   * machine is slow), so a suite waits for a delivery, however long it takes.
   */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  for(path: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const scripts = new Map<string, Script>();
  const served = new Map<string, number>();
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] as string;
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const request = { path, headers: req.headers, body, json, at: Date.now() };
      received.push(request);
      for (const w of [...waiters]) w();
      const script = scripts.get(path) ?? {};
      const n = served.get(path) ?? 0;
      served.set(path, n + 1);
      const statuses = script.statuses ?? [200];
      const status = statuses[Math.min(n, statuses.length - 1)] as number;
      const answer = () => {
        res.writeHead(status, { 'content-type': 'text/plain', ...(script.headers ?? {}) });
        res.end(script.body ? script.body(request) : status < 300 ? 'ok' : `status ${status}`);
      };
      const delayed = script.delayMs ? () => setTimeout(answer, script.delayMs) : answer;
      if (script.until) void script.until.then(delayed, delayed);
      else delayed();
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const forPath = (path: string) => received.filter((r) => r.path === path);
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    on: (path, script) => {
      scripts.set(path, script);
      served.delete(path);
    },
    for: forPath,
    waitFor(path, count, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const got = forPath(path);
          if (got.length >= count) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(got);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${path}: ${forPath(path).length} of ${count} deliveries after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A gate for `Script.until`: answers wait on `held` until `release()`. */
export function hold(): { held: Promise<void>; release(): void } {
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  return { held, release };
}

/**
 * Resolves once the publisher can send nothing more until a retry's time: it has handled every event
 * of its types the log holds (`handledUpTo`), nothing is queued or in flight (an attempt leaves the
 * queue once its answer is recorded, so the receiver has seen it), a sweep finds no attempt due (a
 * retry's time is the service clock's), and no delivery is in its lease (asked for, not recorded)
 * with no attempt of this process holding it: an overflow left to the log, an attempt cut before its
 * record. Such a delivery is sent once its lease runs out, with no event to say so, so returning
 * before would let "nothing more arrives" pass with one still to come. On a frozen clock (only the test
 * moves time: a FixedClock, also behind TEST_CLOCK's AdjustableClock) that lease never runs out while this waits: it throws at once, naming the
 * delivery (move the clock past it first). A negative check ("nothing more arrives", "no second
 * delivery") waits for this, then reads the receiver: no fixed sleep. Embedded stores only. Throws
 * after REQUEST_HANG_MS (a hang bound, not a speed).
 */
export async function publisherQuiet(rt: Runtime, webhooks: RunningWebhooks | null): Promise<void> {
  if (!webhooks) throw new Error('publisherQuiet: this service runs no webhooks role');
  const end = Date.now() + REQUEST_HANG_MS;
  // The last event the publisher follows, scanned once and then from where the scan stopped.
  let scanned: bigint | null = null;
  let target: bigint | null = null;
  const publisherEvent = (type: string) => PUBLISHER_EVENT_PREFIXES.some((p) => type.startsWith(p));
  for (;;) {
    const head = await rt.events.headPosition();
    for await (const e of rt.events.readAll({ after: scanned })) {
      if (head !== null && e.position > head) break;
      scanned = e.position;
      if (publisherEvent(e.type)) target = e.position;
    }
    const handled = webhooks.handledUpTo();
    const caughtUp = target === null || (handled !== null && handled >= target);
    let leased: WebhookDeliveryDoc[] = [];
    if (
      caughtUp &&
      webhooks.publisher.pending === 0 &&
      (await webhooks.publisher.sweep()) === 0 &&
      webhooks.publisher.pending === 0 &&
      (await rt.events.headPosition()) === head
    ) {
      // The sweep caught the read models up: with nothing held here, a lease is nobody's.
      leased = await inLease(rt);
      if (!leased.length) return;
      if (await frozen(rt.clock)) throw new Error(leaseMessage(leased, 'the clock is frozen'));
    }
    if (Date.now() > end)
      throw new Error(
        leased.length
          ? leaseMessage(leased, `after ${REQUEST_HANG_MS} ms`)
          : `the publisher never went quiet: handled ${handled} of ${target}, ${webhooks.publisher.pending} pending`,
      );
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Whether `clock` stands still: it reads the same after a few real milliseconds. Read, not inferred from
 * its class, as a runtime under TEST_CLOCK wraps a test's FixedClock in an AdjustableClock.
 */
async function frozen(clock: Clock): Promise<boolean> {
  const before = clock.now().getTime();
  const since = performance.now();
  while (performance.now() - since < 5) await new Promise((r) => setTimeout(r, 5));
  return clock.now().getTime() === before;
}

/**
 * Deliveries in their lease: an attempt asked for (a fan-out's first, a request) and not recorded, due
 * before the lease ends (a scheduled retry has both at its time), as publisher.askForUnfinished reads it.
 */
async function inLease(rt: Runtime): Promise<WebhookDeliveryDoc[]> {
  const pending = await rt.docs
    .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
    .find({ status: 'pending' }, { sort: { sweep_after: 1 } });
  return pending.filter(
    (d) => d.next_attempt_at !== null && d.sweep_after !== null && d.next_attempt_at < d.sweep_after,
  );
}

const leaseMessage = (leased: WebhookDeliveryDoc[], why: string) =>
  `the publisher is not quiet (${why}): ${leased.length} delivery(ies) in a lease no attempt holds, sent once it runs out: ${leased
    .slice(0, 5)
    .map((d) => `${d._id} until ${d.sweep_after}`)
    .join(', ')}`;

/** Once the publisher is quiet (`publisherQuiet`): whether `path` got exactly `count` requests. */
export async function quietNow(
  rt: Runtime,
  webhooks: RunningWebhooks | null,
  receiver: Receiver,
  path: string,
  count: number,
): Promise<boolean> {
  await publisherQuiet(rt, webhooks);
  return receiver.for(path).length === count;
}

/**
 * No further request for `path` arrives within `ms` (beyond `count`): a fixed wait, only where no
 * signal says the sender is done (a process of its own, killed and restarted). Where the publisher
 * runs in the test's process, wait for `publisherQuiet` instead.
 */
export async function quietFor(
  receiver: Receiver,
  path: string,
  count: number,
  ms = 1_500,
): Promise<boolean> {
  await new Promise((r) => setTimeout(r, ms));
  return receiver.for(path).length === count;
}
