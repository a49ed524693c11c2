// Without a bootstrap file the service creates a demo restaurant and a key with every scope, so a
// newcomer can curl it at once.
import { apiKeyStream } from '../commands/credentials/events';
import { createApiKey } from '../commands/credentials/handler';
import { createRestaurant, loadRestaurant } from '../commands/restaurants/handler';
import { listKeys } from '../queries/api-keys';
import { operatorMeta } from './core/command-meta';
import { ApiError } from './core/errors';
import { SCOPES } from './core/scopes';
import { NO_STREAM, WrongExpectedRevisionError } from './ports/event-store';
import type { Runtime } from './runtime';

export interface DemoInfo {
  restaurantId: string;
  /** The plain key, only when it was created in this start (it is stored hashed). */
  token: string | null;
}

export const DEMO_RESTAURANT = 'rest_demo';

/**
 * Called at every start with the demo restaurant (so a start that died before seeding is healed);
 * seeds only what has never been there and returns the last position it appended, if any.
 */
export type DemoSeeder = (rt: Runtime, restaurantId: string) => Promise<bigint | null>;
const seeders: DemoSeeder[] = [];
/** The catalog module adds rooms, tables and shifts to the demo restaurant through this. */
export function registerDemoSeeder(seeder: DemoSeeder): void {
  seeders.push(seeder);
}

/**
 * Called once for the demo key while it is active (by the start that made it, or the next one if that
 * start died first), with its id and scopes: what belongs to that key (the Insights module's demo
 * endpoints). Returns the last position appended.
 */
export type DemoKeySeeder = (
  rt: Runtime,
  restaurantId: string,
  key: { id: string; scopes: readonly string[] },
) => Promise<bigint | null>;
const keySeeders: DemoKeySeeder[] = [];
export function registerDemoKeySeeder(seeder: DemoKeySeeder): void {
  keySeeders.push(seeder);
}

/** Says the key seeders ran for the demo key (so what an operator deletes later is not made again). */
export const DEMO_KEY_SEEDED_STREAM = 'demo-key-seeded';

/**
 * Runs the key seeders once for the demo key, while it is active: at the start that made it, or at
 * the next one when that start died before they finished (each seeder finds what it made already).
 */
async function seedForKey(rt: Runtime): Promise<bigint | null> {
  if ((await rt.events.readStream(DEMO_KEY_SEEDED_STREAM, { limit: 1 })).length > 0) return null;
  const key = await rt.events.readStream(apiKeyStream(DEMO_KEY));
  if (!key.some((e) => e.type === 'ApiKeyCreated') || key.some((e) => e.type === 'ApiKeyRevoked'))
    return null;
  let position: bigint | null = null;
  for (const seed of keySeeders)
    position = (await seed(rt, DEMO_RESTAURANT, { id: DEMO_KEY, scopes: SCOPES })) ?? position;
  try {
    const marked = await rt.events.append(
      DEMO_KEY_SEEDED_STREAM,
      [
        {
          type: 'DemoKeySeeded',
          data: { key_id: DEMO_KEY, at: rt.clock.now().toISOString() },
          metadata: { ...operatorMeta('demo') },
        },
      ],
      NO_STREAM,
    );
    position = marked.position;
  } catch (err) {
    if (!isConflict(err)) throw err;
  }
  return position;
}

/** The demo key has a fixed id, so a start that died before creating it creates it on the next start. */
export const DEMO_KEY = 'key_demo_every_scope';

const isConflict = (err: unknown) =>
  (err instanceof ApiError && err.status === 409) || err instanceof WrongExpectedRevisionError;

/**
 * Whether a start without a bootstrap file makes (or heals) the demo: on a first start (the log holds
 * no restaurant), or when the demo restaurant is already there. A log holding restaurants of its own
 * (a server bootstrapped once, then started without BOOTSTRAP_FILE) never gains a demo restaurant, a
 * key holding every scope printed to stdout, and a month of made-up activity in its log.
 */
export async function demoBelongsHere(rt: Runtime): Promise<boolean> {
  if ((await loadRestaurant(rt, DEMO_RESTAURANT)).exists) return true;
  return !(await logHoldsRestaurant(rt));
}

/**
 * Asked of the log, never of the read models: scaled out, an API process may start before the
 * projector has filled MongoDB, and an empty read model would then pass for a first start. Stops at
 * the first restaurant, which comes early in a log that has one (everything else of a restaurant is
 * written after it); a log without one holds only platform-wide events, few.
 */
async function logHoldsRestaurant(rt: Runtime): Promise<boolean> {
  if ((await rt.events.headPosition()) === null) return false;
  for await (const event of rt.events.readAll({ batchSize: 100 }))
    if (event.type === 'RestaurantCreated') return true;
  return false;
}

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
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
  for (const seed of seeders) position = (await seed(rt, DEMO_RESTAURANT)) ?? position;
  await rt.settle(position);
  let token: string | null = null;
  // Any key of the demo restaurant, revoked ones included (an operator's revocation is respected; a
  // data directory from before the fixed key id has its key under another id).
  const hasKey = async () =>
    (await rt.events.readStream(apiKeyStream(DEMO_KEY), { limit: 1 })).length > 0 ||
    (await listKeys(rt.docs, DEMO_RESTAURANT)).length > 0;
  if (options.withKey && !(await hasKey())) {
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
  if (options.withKey) position = (await seedForKey(rt)) ?? position;
  await rt.settle(position);
  return { restaurantId: DEMO_RESTAURANT, token };
}
