// Scaled out, webhook workers share the log through an EventStoreDB persistent subscription to $all
// (one consumer group): the server hands each event to one worker, tracks what was acknowledged, and
// hands an unacknowledged event to another worker when its holder dies. Loaded only when scaled out.
import {
  EventStoreDBClient,
  eventTypeFilter,
  PersistentSubscriptionExistsError,
  persistentSubscriptionToAllSettingsFromDefaults,
  START,
} from '@eventstore/db-client';
import { isSystemEvent, toRecordedEvent } from '../adapters/event-store/eventstoredb-mapping';
import type { RecordedEvent } from '../ports/event-store';

export const WEBHOOK_GROUP = 'couvert-webhooks';

export interface Consumer {
  stop(): Promise<void>;
  done: Promise<void>;
}

/**
 * Runs `handle` for every event whose type starts with one of `prefixes`, acknowledging it once
 * handled (a failure parks it after the server's retries). Resubscribes with backoff after a drop.
 */
export function consumePersistent(
  connectionString: string,
  prefixes: string[],
  handle: (event: RecordedEvent) => Promise<void>,
  onError: (err: unknown) => void,
  group = WEBHOOK_GROUP,
): Consumer {
  const client = EventStoreDBClient.connectionString(connectionString);
  let stopped = false;
  let current: { unsubscribe(): Promise<void> } | null = null;
  const done = (async () => {
    let delay = 200;
    while (!stopped) {
      try {
        try {
          await client.createPersistentSubscriptionToAll(
            group,
            // From the start: endpoints only receive events after their creation, so history costs a scan, never a send.
            persistentSubscriptionToAllSettingsFromDefaults({
              startFrom: START,
              messageTimeout: 60_000,
              maxRetryCount: 10,
            }),
            { filter: eventTypeFilter({ prefixes }) },
          );
        } catch (err) {
          if (!(err instanceof PersistentSubscriptionExistsError)) throw err;
        }
        const sub = client.subscribeToPersistentSubscriptionToAll(group, { bufferSize: 64 });
        current = sub;
        for await (const resolved of sub) {
          if (stopped) break;
          const raw = resolved.event;
          if (!raw || isSystemEvent(raw)) {
            await sub.ack(resolved);
            continue;
          }
          try {
            await handle(toRecordedEvent(raw as never));
            await sub.ack(resolved);
          } catch (err) {
            onError(err);
            await sub.nack('retry', (err as Error).message ?? 'failed', resolved);
          }
          delay = 200;
        }
      } catch (err) {
        if (stopped) break;
        onError(err);
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 10_000);
      }
    }
  })();
  return {
    done,
    async stop() {
      stopped = true;
      await current?.unsubscribe().catch(() => undefined);
      await done.catch(() => undefined);
      await client.dispose();
    },
  };
}
