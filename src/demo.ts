// Without a bootstrap file the service creates a demo restaurant and a key with every scope, so a
// newcomer can curl it at once.
import { createApiKey } from '../commands/credentials/handler';
import { createRestaurant, loadRestaurant } from '../commands/restaurants/handler';
import { operatorMeta } from './core/command-meta';
import { SCOPES } from './core/scopes';
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

export async function ensureDemo(rt: Runtime): Promise<DemoInfo> {
  const meta = operatorMeta('demo');
  const existing = await loadRestaurant(rt, DEMO_RESTAURANT);
  if (existing.exists) return { restaurantId: DEMO_RESTAURANT, token: null };
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
  let position = created.position;
  for (const seed of seeders) position = (await seed(rt, DEMO_RESTAURANT)) ?? position;
  const key = await createApiKey(
    rt,
    { restaurantId: DEMO_RESTAURANT, name: 'Demo key (every scope)', scopes: [...SCOPES] },
    meta,
  );
  await rt.settle(key.position ?? position);
  return { restaurantId: DEMO_RESTAURANT, token: key.token };
}
