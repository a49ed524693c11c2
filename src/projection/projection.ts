import type { DocumentStore } from '../ports/document-store';
import type { RecordedEvent } from '../ports/event-store';

/**
 * A read model fed from the log. `apply` must be idempotent (the runner delivers at least once):
 * guard writes with `applyOnce` or make them naturally idempotent ($set of absolute values).
 */
export interface Projection {
  readonly name: string;
  /** Exact event types this projection handles; other events only move its checkpoint. */
  readonly eventTypes: readonly string[];
  setup?(docs: DocumentStore): Promise<void>;
  apply(event: RecordedEvent, docs: DocumentStore): Promise<void>;
}
