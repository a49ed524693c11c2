// A write side and the customer read model in memory, for customer tests that need no HTTP: commands
// append to a memory log, `settle()` applies it, queries read the embedded document store.

import { applyCatalog } from '../../commands/catalog/handler';
import type { CustomFieldDefinition } from '../../commands/customers/custom-fields';
import { createRestaurant } from '../../commands/restaurants/handler';
import { customersProjection } from '../../projections/customers';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import type { CommandMeta } from '../../src/core/command-meta';
import type { EventStore } from '../../src/ports/event-store';
import { ProjectionRunner } from '../../src/projection/runner';
import { restaurantProfile } from './restaurants';

export interface CustomerWorld {
  events: EventStore;
  docs: EmbeddedDocumentStore;
  clock: FixedClock;
  runner: ProjectionRunner;
  settle: () => Promise<number>;
  meta: CommandMeta;
  restaurant: { _id: string; country_code: string; customer_matching: boolean };
  /** Replaces the custom field definitions of rest_a (through the catalog's write side). */
  defineFields: (fields: readonly CustomFieldDefinition[]) => Promise<void>;
}

const profile = (slug: string) => restaurantProfile(slug);

export async function customerWorld(
  start = '2026-03-01T10:00:00.000Z',
  /** Another log than one in memory (made with the world's clock). */
  log?: (clock: FixedClock) => EventStore,
): Promise<CustomerWorld> {
  const clock = new FixedClock(start);
  const events = log?.(clock) ?? new MemoryEventStore({ clock });
  const docs = new EmbeddedDocumentStore();
  const runner = new ProjectionRunner(events, docs, [customersProjection]);
  await runner.start();
  const meta: CommandMeta = { actor: 'test' };
  const deps = { events, clock };
  await createRestaurant(deps, 'rest_a', profile('rest-a'), meta);
  await createRestaurant(deps, 'rest_b', profile('rest-b'), meta);
  return {
    events,
    docs,
    clock,
    runner,
    settle: () => runner.catchUp(),
    meta,
    restaurant: { _id: 'rest_a', country_code: 'FR', customer_matching: true },
    defineFields: async (fields) => {
      await applyCatalog(deps, 'rest_a', { customer_fields: fields }, meta, 'replace');
    },
  };
}
