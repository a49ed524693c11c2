import { DateTime } from 'luxon';
import { ApiError, type Issue, validationError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import type { RestaurantProfile } from './events';

export interface RestaurantState {
  exists: boolean;
  profile: RestaurantProfile | null;
  suspended: boolean;
}

export const initialRestaurant: RestaurantState = { exists: false, profile: null, suspended: false };

export function evolveRestaurant(state: RestaurantState, event: RecordedEvent): RestaurantState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'RestaurantCreated': {
      const { restaurant_id: _id, at: _at, ...profile } = d;
      return { exists: true, profile: profile as unknown as RestaurantProfile, suspended: false };
    }
    case 'RestaurantUpdated':
      return { ...state, profile: { ...(state.profile as RestaurantProfile), ...(d.changes as object) } };
    case 'RestaurantSuspended':
      return { ...state, suspended: true };
    case 'RestaurantResumed':
      return { ...state, suspended: false };
    default:
      return state;
  }
}

const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const CURRENCY = /^[A-Z]{3}$/;
const COUNTRY = /^[A-Z]{2}$/;

/** Checks a (partial) profile; every faulty field is reported. */
export function checkProfile(p: Partial<RestaurantProfile>): Issue[] {
  const issues: Issue[] = [];
  const bad = (path: string, message: string) => issues.push({ path, code: 'invalid_format', message });
  if (
    p.name !== undefined &&
    (typeof p.name !== 'string' || p.name.trim().length === 0 || p.name.length > 200)
  )
    bad('name', 'name must be 1 to 200 characters');
  if (p.slug !== undefined && !SLUG.test(p.slug))
    bad('slug', 'slug must be lowercase letters, digits and dashes');
  if (p.country_code !== undefined && !COUNTRY.test(p.country_code))
    bad('country_code', 'country_code must be an ISO 3166-1 alpha-2 code such as FR');
  if (p.timezone !== undefined && !DateTime.local().setZone(p.timezone).isValid)
    bad('timezone', 'timezone must be an IANA time zone such as Europe/Paris');
  if (p.currency !== undefined && !CURRENCY.test(p.currency))
    bad('currency', 'currency must be an ISO 4217 code such as EUR');
  return issues;
}

export const checkRestaurantId = (id: string): Issue[] =>
  ID.test(id)
    ? []
    : [{ path: 'id', code: 'invalid_format', message: 'id must be 1 to 64 letters, digits, _ or -' }];

export function decideCreate(
  state: RestaurantState,
  id: string,
  profile: RestaurantProfile,
  at: string,
): NewEvent[] {
  const issues = [...checkRestaurantId(id), ...checkProfile(profile)];
  if (issues.length) throw validationError(issues, 'The restaurant is invalid');
  if (state.exists) throw new ApiError(409, 'RESOURCE_CONFLICT', `restaurant ${id} already exists`);
  return [{ type: 'RestaurantCreated', data: { restaurant_id: id, at, ...profile } }];
}

/** Only the fields that differ become an event: applying the same update twice changes nothing. */
export function decideUpdate(
  state: RestaurantState,
  id: string,
  changes: Partial<RestaurantProfile>,
  at: string,
): NewEvent[] {
  if (!state.exists || !state.profile)
    throw new ApiError(404, 'RESOURCE_NOT_FOUND', `restaurant ${id} not found`);
  const issues = checkProfile(changes);
  if (issues.length) throw validationError(issues, 'The restaurant update is invalid');
  const diff: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) continue;
    if (JSON.stringify((state.profile as unknown as Record<string, unknown>)[k]) !== JSON.stringify(v))
      diff[k] = v;
  }
  return Object.keys(diff).length
    ? [{ type: 'RestaurantUpdated', data: { restaurant_id: id, at, changes: diff } }]
    : [];
}

export function decideSuspend(
  state: RestaurantState,
  id: string,
  reason: string | null,
  at: string,
): NewEvent[] {
  if (!state.exists) throw new ApiError(404, 'RESOURCE_NOT_FOUND', `restaurant ${id} not found`);
  return state.suspended ? [] : [{ type: 'RestaurantSuspended', data: { restaurant_id: id, at, reason } }];
}

export function decideResume(state: RestaurantState, id: string, at: string): NewEvent[] {
  if (!state.exists) throw new ApiError(404, 'RESOURCE_NOT_FOUND', `restaurant ${id} not found`);
  return state.suspended ? [{ type: 'RestaurantResumed', data: { restaurant_id: id, at } }] : [];
}
