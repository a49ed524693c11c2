import type { EventMetadata } from '../ports/event-store';

/** Who asked for a command and in which request: copied onto every event it appends. */
export interface CommandMeta extends EventMetadata {
  actor: string;
  request_id?: string;
  correlation_id?: string;
}

export const operatorMeta = (what = 'cli'): CommandMeta => ({ actor: `operator:${what}` });
export const systemMeta = (what: string): CommandMeta => ({ actor: `system:${what}` });
