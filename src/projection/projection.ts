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
  /**
   * The version of this read model's schema and rules (1 when absent). A higher version of the same
   * name, given with the collections it writes, is rebuilt beside the running one and takes over
   * when caught up (src/projection/versions.ts).
   */
  readonly version?: number;
  /** The collections this projection writes (needed to version it: version N ≥ 2 writes `<name>_vN`). */
  readonly collections?: readonly string[];
  setup?(docs: DocumentStore): Promise<void>;
  apply(event: RecordedEvent, docs: DocumentStore): Promise<void>;
}
