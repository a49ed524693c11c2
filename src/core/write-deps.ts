import type { EventStore } from '../ports/event-store';
import type { Clock } from './clock';

/** What a command handler needs: the log and the time. Read models are never consulted for decisions. */
export interface WriteDeps {
  events: EventStore;
  clock: Clock;
}
