// Runs the publisher for the `webhooks` role. Embedded: it follows the log in this process (catch-up
// then live) from its own checkpoint, kept in DATA_DIR/webhooks.checkpoint. Scaled out: it joins the
// EventStoreDB persistent subscription shared by every webhooks process. Either way a sweeper asks
// for due retries every second (service clock).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { positionFromString, positionToString, type RecordedEvent } from '../ports/event-store';
import type { Runtime } from '../runtime';
import { PUBLISHER_EVENT_PREFIXES, type PublisherOptions, WebhookPublisher } from './publisher';

export interface RunningWebhooks {
  publisher: WebhookPublisher;
  stop(): Promise<void>;
}

const CHECKPOINT_FILE = 'webhooks.checkpoint';

function readCheckpoint(dir: string): bigint | null | undefined {
  try {
    const raw = readFileSync(join(dir, CHECKPOINT_FILE), 'utf8').trim();
    return raw === '' ? null : positionFromString(raw);
  } catch {
    return undefined;
  }
}

function writeCheckpoint(dir: string, position: bigint): void {
  const file = join(dir, CHECKPOINT_FILE);
  writeFileSync(`${file}.tmp`, positionToString(position));
  renameSync(`${file}.tmp`, file);
}

/** Where a first start begins: before the oldest endpoint (nothing earlier can be sent), or the head. */
async function firstStart(rt: Runtime): Promise<bigint | null> {
  const [oldest] = await rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .find({}, { sort: { created_position: 1 }, limit: 1 });
  if (oldest) return positionFromString(oldest.created_position);
  return rt.events.headPosition();
}

export function startWebhooks(rt: Runtime, options: PublisherOptions = {}): RunningWebhooks {
  const publisher = new WebhookPublisher(rt, options);
  let stopped = false;
  const log = (err: unknown, what: string) =>
    rt.logger.error({ err: { message: (err as Error)?.message ?? String(err) } }, what);

  let stopFollowing: () => Promise<void> = async () => {};
  let following: Promise<void>;
  if (rt.config.store === 'embedded') {
    const dir = rt.config.dataDir;
    let close: (() => Promise<void>) | null = null;
    stopFollowing = async () => {
      await close?.();
    };
    following = (async () => {
      let delay = 200;
      while (!stopped) {
        try {
          let after = readCheckpoint(dir);
          if (after === undefined) {
            after = await firstStart(rt);
            if (after !== null) writeCheckpoint(dir, after);
          }
          const sub = rt.events.subscribe({ after, eventTypePrefixes: PUBLISHER_EVENT_PREFIXES });
          close = () => sub.close();
          let lastSaved = Date.now();
          let pending: bigint | null = null;
          for await (const event of sub as AsyncIterable<RecordedEvent>) {
            if (stopped) break;
            await publisher.handle(event);
            pending = event.position;
            // Saved at most every 100 ms: a replay after a crash is harmless (every step is idempotent), only slower.
            if (Date.now() - lastSaved > 100) {
              writeCheckpoint(dir, pending);
              lastSaved = Date.now();
              pending = null;
            }
          }
          if (pending !== null) writeCheckpoint(dir, pending);
          return;
        } catch (err) {
          if (stopped) return;
          log(err, 'webhook publisher failed; restarting');
          await new Promise((r) => setTimeout(r, delay));
          delay = Math.min(delay * 2, 10_000);
        }
      }
    })();
  } else {
    following = (async () => {
      const { consumePersistent } = await import('./esdb-consumer');
      const consumer = consumePersistent(
        rt.config.eventstoreUrl as string,
        PUBLISHER_EVENT_PREFIXES,
        (event) => publisher.handle(event),
        (err) => log(err, 'webhook consumer error'),
      );
      stopFollowing = () => consumer.stop();
      await consumer.done;
    })();
  }

  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = sweeping.then(() => publisher.sweep()).catch((err) => log(err, 'webhook sweep failed'));
  }, 1_000);
  timer.unref();

  return {
    publisher,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await stopFollowing();
      await publisher.stop();
      await sweeping;
      await following.catch(() => undefined);
    },
  };
}
