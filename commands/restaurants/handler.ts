import { claim, release } from '../../src/core/claims';
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { recordCrossing, startTracking } from '../reservations/night-seatings';
import {
  decideCreate,
  decideResume,
  decideSuspend,
  decideUpdate,
  evolveRestaurant,
  initialRestaurant,
  type RestaurantState,
} from './decide';
import { type RestaurantProfile, restaurantStream, slugClaimStream } from './events';

const base = (id: string, meta: CommandMeta, deps: WriteDeps) => ({
  stream: restaurantStream(id),
  initial: initialRestaurant,
  evolve: evolveRestaurant,
  metadata: { ...meta, restaurant_id: id },
  clock: deps.clock,
});

export async function createRestaurant(
  deps: WriteDeps,
  id: string,
  profile: RestaurantProfile,
  meta: CommandMeta,
) {
  const at = deps.clock.now().toISOString();
  // Validate, against the restaurant as it is, before claiming the slug, so a refused restaurant
  // (invalid, or an id that exists) never holds one.
  decideCreate(await loadRestaurant(deps, id), id, profile, at);
  await claim(deps, slugClaimStream(profile.slug), id, { ...meta, restaurant_id: id }, 'slug');
  const outcome = await runCommand<RestaurantState>(deps.events, {
    ...base(id, meta, deps),
    decide: (s) => decideCreate(s, id, profile, at),
  });
  // From its creation on, a seating past midnight is recorded before it is held (night-seatings.ts):
  // until one is, a booking reads no neighbouring day. A crash before this leaves it untracked
  // (every neighbouring day read, as before tracking existed).
  if (outcome.appended.length) await startTracking(deps.events, id, meta);
  return outcome;
}

export async function updateRestaurant(
  deps: WriteDeps,
  id: string,
  changes: Partial<RestaurantProfile>,
  meta: CommandMeta,
) {
  const at = deps.clock.now().toISOString();
  const current = await loadRestaurant(deps, id);
  const oldSlug = current.profile?.slug ?? null;
  const newSlug = changes.slug !== undefined && changes.slug !== oldSlug ? changes.slug : null;
  // Claim a new slug first: a taken slug must refuse the whole update, not leave half of it.
  decideUpdate(current, id, changes, at);
  // A new time zone moves every calendar day a seating was placed in: from here on every booking
  // reads the neighbouring days (recorded before the change, so none decides on the new zone without).
  if (changes.timezone !== undefined && current.profile && changes.timezone !== current.profile.timezone)
    await recordCrossing(deps.events, id, 'TIMEZONE_CHANGED', { ...meta, restaurant_id: id }, at);
  if (newSlug) await claim(deps, slugClaimStream(newSlug), id, { ...meta, restaurant_id: id }, 'slug');
  try {
    const outcome = await runCommand<RestaurantState>(deps.events, {
      ...base(id, meta, deps),
      decide: (s) => decideUpdate(s, id, changes, at),
    });
    if (newSlug && oldSlug) await release(deps, slugClaimStream(oldSlug), id, { ...meta, restaurant_id: id });
    return outcome;
  } catch (err) {
    if (newSlug) await release(deps, slugClaimStream(newSlug), id, { ...meta, restaurant_id: id });
    throw err;
  }
}

export const suspendRestaurant = (deps: WriteDeps, id: string, reason: string | null, meta: CommandMeta) =>
  runCommand<RestaurantState>(deps.events, {
    ...base(id, meta, deps),
    decide: (s) => decideSuspend(s, id, reason, deps.clock.now().toISOString()),
  });

export const resumeRestaurant = (deps: WriteDeps, id: string, meta: CommandMeta) =>
  runCommand<RestaurantState>(deps.events, {
    ...base(id, meta, deps),
    decide: (s) => decideResume(s, id, deps.clock.now().toISOString()),
  });

export async function loadRestaurant(deps: WriteDeps, id: string) {
  const events = await deps.events.readStream(restaurantStream(id));
  return events.reduce(evolveRestaurant, initialRestaurant);
}
