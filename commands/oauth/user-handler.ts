// Commands on users: create, change password, set access to a restaurant.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { notFound } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import { loadRestaurant } from '../restaurants/handler';
import type { RestaurantAccess } from './events';
import { userStream } from './events';
import { hashPassword, verifyPassword } from './passwords';
import {
  checkEmail,
  checkPassword,
  decideChangePassword,
  decideCreateUser,
  decideSetAccess,
  evolveUser,
  initialUser,
  type UserState,
  userIdFor,
} from './users';

export async function loadUser(deps: WriteDeps, email: string): Promise<UserState> {
  const events = await deps.events.readStream(userStream(userIdFor(email)));
  return events.reduce(evolveUser, initialUser);
}

export async function loadUserById(deps: WriteDeps, userId: string): Promise<UserState> {
  const events = await deps.events.readStream(userStream(userId));
  return events.reduce(evolveUser, initialUser);
}

const base = (email: string, meta: CommandMeta, deps: WriteDeps) => ({
  stream: userStream(userIdFor(email)),
  initial: initialUser,
  evolve: evolveUser,
  metadata: meta,
  clock: deps.clock,
});

export async function createUser(deps: WriteDeps, email: string, password: string, meta: CommandMeta) {
  const e = checkEmail(email);
  checkPassword(password);
  const hash = await hashPassword(password);
  const at = deps.clock.now().toISOString();
  return runCommand<UserState>(deps.events, {
    ...base(e, meta, deps),
    decide: (s) => decideCreateUser(s, e, hash, at),
  });
}

/** Sets the password; appends nothing when it already is this one (a bootstrap file applied twice). */
export async function setUserPassword(deps: WriteDeps, email: string, password: string, meta: CommandMeta) {
  checkPassword(password);
  const current = await loadUser(deps, email);
  if (!current.user_id) throw notFound(`user ${email}`);
  if (current.password_hash && (await verifyPassword(password, current.password_hash)))
    return { state: current, appended: [], position: null };
  const hash = await hashPassword(password);
  const at = deps.clock.now().toISOString();
  return runCommand<UserState>(deps.events, {
    ...base(email, meta, deps),
    decide: (s) => decideChangePassword(s, hash, at),
  });
}

export async function setRestaurantAccess(
  deps: WriteDeps,
  email: string,
  access: RestaurantAccess,
  meta: CommandMeta,
) {
  if (!(await loadRestaurant(deps, access.restaurant_id)).exists)
    throw notFound(`restaurant ${access.restaurant_id}`);
  const at = deps.clock.now().toISOString();
  return runCommand<UserState>(deps.events, {
    ...base(email, meta, deps),
    decide: (s) => {
      if (!s.user_id) throw notFound(`user ${normalised(email)}`);
      return decideSetAccess(s, access, at);
    },
  });
}

const normalised = (email: string) => email.trim().toLowerCase();
