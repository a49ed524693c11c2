// Pure rules for users (restaurant managers who sign in): creation, password changes, access to
// restaurants ("manage integrations"). The user id is derived from the normalised email, so a user's
// stream is found from the email typed at sign-in and one email can never hold two users.
import { conflict, notFound, validationError } from '../../src/core/errors';
import { sha256 } from '../../src/core/ids';
import { charCount } from '../../src/core/text';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import type { RestaurantAccess } from './events';

export interface UserState {
  user_id: string | null;
  email: string | null;
  password_hash: string | null;
  /** restaurant id → manage integrations */
  restaurants: Record<string, boolean>;
}
export const initialUser: UserState = { user_id: null, email: null, password_hash: null, restaurants: {} };

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
export const userIdFor = (email: string) => `usr_${sha256(`user:${normaliseEmail(email)}`).slice(0, 24)}`;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function evolveUser(state: UserState, event: RecordedEvent): UserState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'UserCreated':
      return {
        user_id: d.user_id as string,
        email: d.email as string,
        password_hash: d.password_hash as string,
        restaurants: {},
      };
    case 'UserPasswordChanged':
      return { ...state, password_hash: d.password_hash as string };
    case 'UserRestaurantAccessSet':
      return {
        ...state,
        restaurants: { ...state.restaurants, [d.restaurant_id as string]: d.manage_integrations as boolean },
      };
    default:
      return state;
  }
}

/** 12 to 1024 characters (NIST SP 800-63B: a minimum length, no composition rules). */
export function checkPassword(password: string): void {
  const n = charCount(password);
  if (n < 12 || n > 1024)
    throw validationError([
      { path: 'password', code: 'out_of_range', message: 'a password is 12 to 1024 characters' },
    ]);
}

export function checkEmail(email: string): string {
  const e = normaliseEmail(email);
  if (!EMAIL.test(e) || charCount(e) > 254)
    throw validationError([
      { path: 'email', code: 'invalid_format', message: 'email is not an email address' },
    ]);
  return e;
}

export function decideCreateUser(
  state: UserState,
  email: string,
  passwordHash: string,
  at: string,
): NewEvent[] {
  const e = checkEmail(email);
  if (state.user_id) throw conflict(`a user with email ${e} already exists`);
  return [
    { type: 'UserCreated', data: { user_id: userIdFor(e), email: e, password_hash: passwordHash, at } },
  ];
}

export function decideChangePassword(state: UserState, passwordHash: string, at: string): NewEvent[] {
  if (!state.user_id) throw notFound('user');
  return [{ type: 'UserPasswordChanged', data: { user_id: state.user_id, password_hash: passwordHash, at } }];
}

export function decideSetAccess(state: UserState, access: RestaurantAccess, at: string): NewEvent[] {
  if (!state.user_id) throw notFound('user');
  if (state.restaurants[access.restaurant_id] === access.manage_integrations) return [];
  return [{ type: 'UserRestaurantAccessSet', data: { user_id: state.user_id, at, ...access } }];
}

/** The restaurants where this user manages integrations. */
export const managedRestaurants = (state: UserState): string[] =>
  Object.entries(state.restaurants)
    .filter(([, manage]) => manage)
    .map(([id]) => id)
    .sort();
