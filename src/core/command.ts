// The one way the write side changes state: load a stream, fold it, decide, append with the expected
// revision; on a conflict reload and decide again (bounded). Within a process, the commands of one
// stream run one after the other: a conflict then comes from another process only (the CLI, another
// API process), where twelve concurrent PATCHes of one customer used to lose five of theirs to 409
// after five rounds in which one append each won.

import {
  type EventMetadata,
  type EventStore,
  type NewEvent,
  NO_STREAM,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../ports/event-store';
import type { Clock } from './clock';
import { KeyedQueue } from './keyed-queue';

export interface StreamState<S> {
  state: S;
  /** Revision of the last event, or 'no_stream'. */
  revision: number | typeof NO_STREAM;
  events: RecordedEvent[];
}

export async function loadStream<S>(
  store: EventStore,
  stream: string,
  initial: S,
  evolve: (state: S, event: RecordedEvent) => S,
): Promise<StreamState<S>> {
  const events = await store.readStream(stream);
  let state = initial;
  for (const e of events) state = evolve(state, e);
  const last = events.at(-1);
  return { state, revision: last ? last.revision : NO_STREAM, events };
}

export interface CommandOutcome<S> {
  state: S;
  /** Events this command appended (empty when the decision was a no-op). */
  appended: NewEvent[];
  /** Global position of the append, or null when nothing was appended. */
  position: bigint | null;
}

export interface RunCommandOptions<S> {
  stream: string;
  initial: S;
  evolve: (state: S, event: RecordedEvent) => S;
  /** Pure: the events the command produces given the current state, or a thrown domain error. */
  decide: (state: S, current: StreamState<S>) => NewEvent[];
  metadata: EventMetadata;
  clock: Clock;
  maxAttempts?: number;
}

/**
 * This process's commands in flight, per store and stream name. Per store object: a test that runs a
 * command from inside another one's append (test/helpers/hooked-events.ts) does so through another
 * object, and must not wait for the command it interrupts.
 */
const queues = new WeakMap<EventStore, KeyedQueue>();

export function runCommand<S>(store: EventStore, options: RunCommandOptions<S>): Promise<CommandOutcome<S>> {
  return runOnStream(store, options.stream, () => attemptCommand(store, options));
}

/**
 * Runs `task` in the place of a command on `stream`: after this process's commands on it in flight, and
 * before those that come later. For a command that decides on a stream with more steps than runCommand
 * takes (PATCH /reservations: a move held, a customer written, then the reservation appended with the
 * revision it loaded), so concurrent ones do not lose their retries to each other. `task` must not run a
 * command on the same stream through the same store (it would wait for itself).
 */
export function runOnStream<T>(store: EventStore, stream: string, task: () => Promise<T>): Promise<T> {
  const owner = queueOwners.get(store) ?? store;
  let queue = queues.get(owner);
  if (!queue) {
    queue = new KeyedQueue();
    queues.set(owner, queue);
  }
  return queue.run(stream, task);
}

/** Views of a log whose commands queue with the log's own (shareCommandQueues). */
const queueOwners = new WeakMap<EventStore, EventStore>();

/**
 * The commands run through `view` queue with those run through `store`: for a view of the same log
 * that only marks its appends (SettledByCallerEvents, the CSV import's). Without it an import's update
 * of a customer and the API's PATCHes of that customer ran in two queues, and the import, losing five
 * rounds to them, failed whole.
 */
export function shareCommandQueues(view: EventStore, store: EventStore): void {
  queueOwners.set(view, queueOwners.get(store) ?? store);
}

async function attemptCommand<S>(
  store: EventStore,
  options: RunCommandOptions<S>,
): Promise<CommandOutcome<S>> {
  const attempts = options.maxAttempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const current = await loadStream(store, options.stream, options.initial, options.evolve);
    const events = options.decide(current.state, current).map((e) => ({
      ...e,
      metadata: { ...options.metadata, ...e.metadata },
    }));
    if (events.length === 0) return { state: current.state, appended: [], position: null };
    try {
      const result = await store.append(options.stream, events, current.revision);
      let state = current.state;
      let revision = current.revision === NO_STREAM ? -1 : current.revision;
      for (const e of events) {
        revision += 1;
        state = options.evolve(state, {
          id: e.id ?? '',
          type: e.type,
          data: e.data,
          metadata: e.metadata ?? {},
          created: options.clock.now().toISOString(),
          stream: options.stream,
          revision,
          position: result.position,
        });
      }
      return { state, appended: events, position: result.position };
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError && attempt < attempts) continue;
      throw err;
    }
  }
}
