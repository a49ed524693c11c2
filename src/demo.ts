// Without a bootstrap file the service creates a demo restaurant and a key with every scope, so a
// newcomer can curl it at once.
import { apiKeyStream } from '../commands/credentials/events';
import { createApiKey } from '../commands/credentials/handler';
import { createRestaurant, loadRestaurant } from '../commands/restaurants/handler';
import { operatorMeta } from './core/command-meta';
import { ApiError } from './core/errors';
import { SCOPES } from './core/scopes';
import { WrongExpectedRevisionError } from './ports/event-store';
import type { Runtime } from './runtime';

export interface DemoInfo {
  restaurantId: string;
  /** The plain key, only when it was created in this start (it is stored hashed). */
  token: string | null;
}

export const DEMO_RESTAURANT = 'rest_demo';

export type DemoSeeder = (rt: Runtime, restaurantId: string) => Promise<bigint | null>;
const seeders: DemoSeeder[] = [];
/** The catalog module adds rooms, tables and shifts to the demo restaurant through this. */
export function registerDemoSeeder(seeder: DemoSeeder): void {
  seeders.push(seeder);
}

/** The demo key has a fixed id, so a start that died before creating it creates it on the next start. */
export const DEMO_KEY = 'key_demo_every_scope';

const isConflict = (err: unknown) =>
  (err instanceof ApiError && err.status === 409) || err instanceof WrongExpectedRevisionError;

/**
 * Creates the demo restaurant (with the registered catalog) unless it exists, and, when `withKey`, its
 * key with every scope unless that exists. Safe when several processes start at once: whoever loses a
 * race finds the restaurant or key there and goes on. The plain key is returned only to the start that
 * created it.
 */
export async function ensureDemo(rt: Runtime, options: { withKey: boolean }): Promise<DemoInfo> {
  const meta = operatorMeta('demo');
  let position: bigint | null = null;
  if (!(await loadRestaurant(rt, DEMO_RESTAURANT)).exists) {
    try {
      const created = await createRestaurant(
        rt,
        DEMO_RESTAURANT,
        {
          name: 'Le Demo',
          slug: 'le-demo',
          country_code: 'FR',
          timezone: 'Europe/Paris',
          currency: 'EUR',
          api_option: true,
          customer_matching: true,
          features: ['MISSED_CALLS'],
        },
        meta,
      );
      position = created.position ?? null;
      for (const seed of seeders) position = (await seed(rt, DEMO_RESTAURANT)) ?? position;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  let token: string | null = null;
  if (options.withKey && (await rt.events.readStream(apiKeyStream(DEMO_KEY))).length === 0) {
    try {
      const key = await createApiKey(
        rt,
        {
          restaurantId: DEMO_RESTAURANT,
          keyId: DEMO_KEY,
          name: 'Demo key (every scope)',
          scopes: [...SCOPES],
        },
        meta,
      );
      token = key.token;
      position = key.position ?? position;
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  await rt.settle(position);
  return { restaurantId: DEMO_RESTAURANT, token };
}
