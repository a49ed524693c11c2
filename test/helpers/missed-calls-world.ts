// The missed-call write side in one process, without HTTP: a restaurant with the feature and the
// templates, the read models, a key store and a fixed clock. For tests that drive the handler directly.
import { applyCatalog } from '../../commands/catalog/handler';
import type { CallRestaurant, MissedCallDeps } from '../../commands/missed-calls/handler';
import { configureSettings } from '../../commands/missed-calls/settings';
import { createRestaurant } from '../../commands/restaurants/handler';
import { allProjections } from '../../projections/index';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { FixedClock } from '../../src/core/clock';
import type { CommandMeta } from '../../src/core/command-meta';
import type { MessageSender, SendResult } from '../../src/ports/message-sender';
import { callerIdsFrom } from '../../src/privacy/caller-ids';
import { ProjectionRunner } from '../../src/projection/runner';
import { TEMPLATES } from './missed-calls';
import { restaurantProfile } from './restaurants';

export interface MissedCallWorld {
  keys: MemoryKeyStore;
  events: MemoryEventStore;
  clock: FixedClock;
  deps: (sender: MessageSender) => MissedCallDeps;
}

export const worldRestaurant: CallRestaurant = {
  _id: 'rest_a',
  name: 'Chez A',
  country_code: 'FR',
  timezone: 'Europe/Paris',
  features: ['MISSED_CALLS'],
};

export async function missedCallWorld(
  now = '2026-06-02T10:00:00Z',
  meta: CommandMeta = { actor: 'test' },
): Promise<MissedCallWorld> {
  const clock = new FixedClock(now);
  const events = new MemoryEventStore({ clock });
  const docs = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(events, docs, allProjections());
  await runner.start();
  await createRestaurant({ events, clock }, 'rest_a', restaurantProfile('rest-a'), meta);
  await applyCatalog({ events, clock }, 'rest_a', { message_templates: TEMPLATES }, meta, 'replace');
  await configureSettings({ events, clock }, 'rest_a', { booking_url: 'https://a.example/book' }, meta);
  await runner.catchUp();
  const keys = new MemoryKeyStore();
  return {
    events,
    clock,
    deps: (sender) => ({
      events,
      clock,
      docs,
      sender,
      settle: async () => {
        await runner.catchUp();
      },
      callers: callerIdsFrom(keys),
    }),
    keys,
  };
}

/** A provider without idempotency that counts what it accepted. */
export function countingSender(): MessageSender & { accepted: string[] } {
  return {
    name: 'counting',
    idempotent: false,
    accepted: [],
    async send(m): Promise<SendResult> {
      this.accepted.push(m.idempotency_key);
      return {
        status: 'accepted',
        provider: 'counting',
        provider_message_id: `p_${this.accepted.length}`,
        left_machine: true,
      };
    },
  };
}
