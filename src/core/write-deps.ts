import type { Logger } from '../logger';
import type { EventStore } from '../ports/event-store';
import type { Clock } from './clock';

/** What a command handler needs: the log and the time. Read models are never consulted for decisions. */
export interface WriteDeps {
  events: EventStore;
  clock: Clock;
  /** Where a failure that is not the answer is told (the runtime's; absent in some tests). */
  logger?: Pick<Logger, 'warn'>;
}
