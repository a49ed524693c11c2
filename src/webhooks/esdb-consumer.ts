// Scaled out, webhook workers share the log through an EventStoreDB persistent subscription to $all
// (one consumer group): the server hands each event to one worker, tracks what was acknowledged, and
// hands an unacknowledged event to another worker when its holder dies. Loaded only when scaled out.

import { createHash } from 'node:crypto';
import {
  EventStoreDBClient,
  eventTypeFilter,
  PersistentSubscriptionExistsError,
  type PersistentSubscriptionToAllResolvedEvent,
  type Position,
  persistentSubscriptionToAllSettingsFromDefaults,
  type ReadPosition,
  START,
} from '@eventstore/db-client';
import { isSystemEvent, toRecordedEvent } from '../adapters/event-store/eventstoredb-mapping';
import type { RecordedEvent } from '../ports/event-store';

export const WEBHOOK_GROUP = 'couvert-webhooks';

/**
 * The consumer group of the workers following `prefixes`. EventStoreDB fixes a persistent
 * subscription's filter when the group is created (a second create is refused, and the group's info
 * does not tell its filter): under one fixed name, a group created before the publisher followed new
 * event types (MarketingOptOut*) never handed them out. The name carries the filter, so a changed
 * list makes a group of its own, which starts where the older group stood (newGroupStart); the old
 * group is left for the operator to delete.
 */
export function webhookGroup(prefixes: readonly string[]): string {
  const filter = JSON.stringify([...new Set(prefixes)].sort());
  return `${WEBHOOK_GROUP}-${createHash('sha256').update(filter).digest('hex').slice(0, 12)}`;
}

export interface Consumer {
  stop(): Promise<void>;
  done: Promise<void>;
}

/**
 * Where `group`, which does not exist yet, starts; null when it exists. A release whose workers follow
 * other event types joins a group of its own (webhookGroup): it starts where the workers' older group
 * furthest on (the one the last release used) has checkpointed, so the events after that are handed
 * out again (a replay the publisher takes harmlessly: fan-outs and attempt requests are idempotent,
 * docs/WEBHOOKS.md) and the history before it is not scanned again (hours on a large log, with every
 * webhook waiting behind it); the event types newly followed are delivered from there on. The very
 * first group starts at the log's start: endpoints only receive events after their creation, so
 * history costs a scan, never a send.
 *
 * Older groups none of which has checkpointed yet (the server writes a checkpoint once 10 events are
 * acknowledged) also give the log's start, and `warn` says so, naming them: their last known
 * position is only how far they read, not what their workers acknowledged, so starting there would
 * skip for good the events they had read and not yet handed out or had acknowledged. A rescan sends
 * nothing twice that matters (see above); it only takes time.
 */
export async function newGroupStart(
  client: Pick<EventStoreDBClient, 'listPersistentSubscriptionsToAll'>,
  group: string,
  warn: (message: string, detail: Record<string, unknown>) => void = () => undefined,
): Promise<ReadPosition | null> {
  const groups = await client.listPersistentSubscriptionsToAll();
  if (groups.some((g) => g.groupName === group)) return null;
  let start: Position | null = null;
  const unchecked: Record<string, string | null> = {};
  for (const g of groups) {
    if (g.groupName !== WEBHOOK_GROUP && !g.groupName.startsWith(`${WEBHOOK_GROUP}-`)) continue;
    const at = g.stats?.lastCheckpointedEventPosition;
    if (at === undefined) {
      const known = g.stats?.lastKnownEventPosition;
      unchecked[g.groupName] = known === undefined ? null : known.commit.toString();
    } else if (start === null || at.commit > start.commit) start = at;
  }
  if (start === null && Object.keys(unchecked).length > 0)
    warn(
      `webhook group ${group} starts at the log's start: no older webhook group has checkpointed, so none says what its workers acknowledged (the whole log is read again; events already sent are not sent again)`,
      { group, olderGroupsLastKnownCommit: unchecked },
    );
  return start ?? START;
}

/** Deliveries of one event before the server parks it (the group's maxRetryCount). */
export const MAX_RETRY_COUNT = 10;
const FIRST_RETRY_DELAY_MS = 250;
const MAX_RETRY_DELAY_MS = 10_000;

/**
 * How long a worker waits before handing back an event it failed to handle. The server redelivers a
 * nacked event at once and parks it after MAX_RETRY_COUNT deliveries, never to hand it out again: ten
 * failures in a row, which a MongoDB election (writes refused: no primary) or a dropped connection
 * gives within a second or two, parked it, and its webhooks were never fanned out (nor the endpoints
 * of a revoked credential deleted), where the embedded publisher restarts from its checkpoint until
 * the event is handled. Doubling from 250 ms with the event's own retry count, at most 10 s: about a
 * minute of failures before the server parks it.
 */
export function retryDelayMs(retryCount: number): number {
  const n = Number.isFinite(retryCount) && retryCount > 0 ? Math.min(retryCount, 16) : 0;
  return Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** n);
}

/** What handleDelivered needs of the subscription (db-client's, or a test's). */
export interface DeliveredEvent {
  event?: { streamId: string; type: string };
  retryCount: number;
}
export interface Acknowledger<E> {
  ack(resolved: E): Promise<void>;
  nack(action: 'retry', reason: string, resolved: E): Promise<void>;
}

/**
 * Handles one event the server handed out and settles it: ack once handled (system events at once);
 * on a failure, reported to onError, nack 'retry' after retryDelayMs (at once when the worker stops,
 * so another takes it). Resolves once settled; the subscription's loop uses handleInTurn instead.
 */
export async function handleDelivered<E extends DeliveredEvent>(
  resolved: E,
  sub: Acknowledger<E>,
  handle: (event: RecordedEvent) => Promise<void>,
  onError: (err: unknown) => void,
  wait: (ms: number) => Promise<void>,
): Promise<void> {
  await handleInTurn(resolved, sub, handle, onError, wait);
}

/**
 * handleDelivered without holding up the events after this one: resolves once the event is handled
 * and acknowledged, or once its failure is reported, with the pending hand-back in that case (the
 * wait, then the nack, running on a timer of its own; a failed nack is reported to onError, never
 * thrown). One failing event must not hold every other event for its wait (up to 10 s a retry, about a
 * minute in all), nor let the events buffered behind it reach the server's message timeout.
 */
export async function handleInTurn<E extends DeliveredEvent>(
  resolved: E,
  sub: Acknowledger<E>,
  handle: (event: RecordedEvent) => Promise<void>,
  onError: (err: unknown) => void,
  wait: (ms: number) => Promise<void>,
): Promise<{ handedBack: Promise<void> } | null> {
  const raw = resolved.event;
  if (!raw || isSystemEvent(raw)) {
    await sub.ack(resolved);
    return null;
  }
  try {
    await handle(toRecordedEvent(raw as never));
  } catch (err) {
    onError(err);
    const handedBack = (async () => {
      await wait(retryDelayMs(resolved.retryCount));
      await sub.nack('retry', (err as Error)?.message ?? 'failed', resolved);
    })().catch(onError);
    return { handedBack };
  }
  await sub.ack(resolved);
  return null;
}

/**
 * Handles the subscription's events one after the other (handleInTurn): a failed event's hand-back
 * waits on its own timer while the next events are handled. The hand-backs pending are few: the server
 * hands out no more unacknowledged events than the subscription's buffer (bufferSize).
 */
export async function consumeInTurn<E extends DeliveredEvent>(
  events: AsyncIterable<E>,
  sub: Acknowledger<E>,
  handle: (event: RecordedEvent) => Promise<void>,
  onError: (err: unknown) => void,
  wait: (ms: number) => Promise<void>,
  pending: Set<Promise<void>>,
  stopped: () => boolean = () => false,
): Promise<void> {
  for await (const resolved of events) {
    if (stopped()) break;
    const failed = await handleInTurn(resolved, sub, handle, onError, wait);
    if (failed) {
      const { handedBack } = failed;
      pending.add(handedBack);
      void handedBack.then(() => pending.delete(handedBack));
    }
  }
}

/**
 * Runs `handle` for every event whose type starts with one of `prefixes`, acknowledging it once
 * handled (a failure is handed back after a wait, handleDelivered, and parked after the server's
 * MAX_RETRY_COUNT deliveries). Resubscribes with backoff after a drop.
 */
export function consumePersistent(
  /** A connection string, or a client (a test's). */
  connection: string | EventStoreDBClient,
  prefixes: string[],
  handle: (event: RecordedEvent) => Promise<void>,
  onError: (err: unknown) => void,
  options: {
    group?: string;
    /** Told when the group is created at the log's start for want of an older group's checkpoint. */
    onWarning?: (message: string, detail: Record<string, unknown>) => void;
  } = {},
): Consumer {
  const group = options.group ?? webhookGroup(prefixes);
  const client =
    typeof connection === 'string' ? EventStoreDBClient.connectionString(connection) : connection;
  let stopped = false;
  let current: { unsubscribe(): Promise<void> } | null = null;
  const stopping = new AbortController();
  // Failed events waiting to be handed back (consumeInTurn): stop() cuts their waits short and lets
  // their nacks go out before it unsubscribes.
  const handingBack = new Set<Promise<void>>();
  // A wait before handing an event back, cut short by stop(): the event then goes to another worker.
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stopping.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        stopping.signal.removeEventListener('abort', done);
        resolve();
      }
      stopping.signal.addEventListener('abort', done, { once: true });
    });
  const done = (async () => {
    let delay = 200;
    while (!stopped) {
      try {
        const startFrom = await newGroupStart(client, group, options.onWarning);
        if (startFrom !== null)
          try {
            await client.createPersistentSubscriptionToAll(
              group,
              persistentSubscriptionToAllSettingsFromDefaults({
                startFrom,
                messageTimeout: 60_000,
                maxRetryCount: MAX_RETRY_COUNT,
              }),
              { filter: eventTypeFilter({ prefixes }) },
            );
          } catch (err) {
            // Another worker created it meanwhile.
            if (!(err instanceof PersistentSubscriptionExistsError)) throw err;
          }
        const sub = client.subscribeToPersistentSubscriptionToAll(group, { bufferSize: 64 });
        current = sub;
        await consumeInTurn<PersistentSubscriptionToAllResolvedEvent>(
          sub,
          sub,
          // An event handled means the connection works again: the next drop starts from a short wait.
          async (event) => {
            await handle(event);
            delay = 200;
          },
          onError,
          pause,
          handingBack,
          () => stopped,
        );
        delay = 200;
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
      stopping.abort();
      await Promise.all(handingBack);
      await current?.unsubscribe().catch(() => undefined);
      await done.catch(() => undefined);
      await client.dispose();
    },
  };
}
