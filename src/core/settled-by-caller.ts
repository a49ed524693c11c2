// A view of the log whose appends are marked `settledByCaller` (ports/event-store.ts AppendOptions):
// for a writer that brings the read models up to date itself (a CSV import settles each slice), so
// that requests arriving meanwhile do not wait for its events to be applied (src/runtime.ts refresh).
import type {
  AppendOptions,
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../ports/event-store';
import { shareCommandQueues } from './command';

export class SettledByCallerEvents implements EventStore {
  constructor(readonly inner: EventStore) {
    // The same log: a command through this view waits for the others on its stream, and they for it.
    shareCommandQueues(this, inner);
  }

  get kind(): EventStore['kind'] {
    return this.inner.kind;
  }

  append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
    options?: AppendOptions,
  ): Promise<AppendResult> {
    return this.inner.append(stream, events, expected, { ...options, settledByCaller: true });
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    return this.inner.readAll(options);
  }

  subscribe(options?: SubscribeOptions): Subscription {
    return this.inner.subscribe(options);
  }

  headPosition(): Promise<bigint | null> {
    return this.inner.headPosition();
  }

  /** The view does not own the log: closing it closes nothing. */
  async close(): Promise<void> {}
}
