// Operator commands on OAuth applications. The client secret is returned once and stored as SHA-256
// (it is 256 random bits: a slow hash buys nothing).
import { randomBytes } from 'node:crypto';
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { constantTimeEqual, newId, sha256 } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import {
  type ApplicationState,
  decideRegister,
  decideRotateSecret,
  decideSetDisabled,
  decideUpdateApplication,
  evolveApplication,
  initialApplication,
} from './applications';
import { type ApplicationProfile, applicationStream, CLIENT_SECRET_PREFIX } from './events';

export const generateClientSecret = () => `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export async function loadApplication(deps: WriteDeps, clientId: string): Promise<ApplicationState> {
  const events = await deps.events.readStream(applicationStream(clientId));
  return events.reduce(evolveApplication, initialApplication);
}

const base = (clientId: string, meta: CommandMeta, deps: WriteDeps) => ({
  stream: applicationStream(clientId),
  initial: initialApplication,
  evolve: evolveApplication,
  metadata: meta,
  clock: deps.clock,
});

export async function registerApplication(
  deps: WriteDeps,
  input: { clientId?: string; secret?: string; profile: ApplicationProfile },
  meta: CommandMeta,
) {
  const clientId = input.clientId ?? newId('app');
  const secret = input.secret ?? generateClientSecret();
  const at = deps.clock.now().toISOString();
  const outcome = await runCommand<ApplicationState>(deps.events, {
    ...base(clientId, meta, deps),
    decide: (s) => decideRegister(s, clientId, input.profile, sha256(secret), at),
  });
  return { ...outcome, clientId, secret };
}

export async function updateApplication(
  deps: WriteDeps,
  clientId: string,
  changes: Partial<ApplicationProfile>,
  meta: CommandMeta,
) {
  const at = deps.clock.now().toISOString();
  return runCommand<ApplicationState>(deps.events, {
    ...base(clientId, meta, deps),
    decide: (s) => decideUpdateApplication(s, clientId, changes, at),
  });
}

/** A new secret replaces the old one at once; returned once. `secret` is given by a bootstrap file only. */
export async function rotateClientSecret(
  deps: WriteDeps,
  clientId: string,
  meta: CommandMeta,
  secret?: string,
) {
  const next = secret ?? generateClientSecret();
  const at = deps.clock.now().toISOString();
  const outcome = await runCommand<ApplicationState>(deps.events, {
    ...base(clientId, meta, deps),
    decide: (s) => decideRotateSecret(s, clientId, sha256(next), at),
  });
  return { ...outcome, secret: next };
}

export async function setApplicationDisabled(
  deps: WriteDeps,
  clientId: string,
  disabled: boolean,
  meta: CommandMeta,
  disconnect = false,
) {
  const at = deps.clock.now().toISOString();
  return runCommand<ApplicationState>(deps.events, {
    ...base(clientId, meta, deps),
    decide: (s) => decideSetDisabled(s, clientId, disabled, at, disconnect),
  });
}

/** The application when `secret` is its current secret and it is enabled; otherwise null. */
export async function authenticateClient(
  deps: WriteDeps,
  clientId: string,
  secret: string,
): Promise<ApplicationState | null> {
  if (clientId.length > 64 || secret.length > 256) return null;
  const app = await loadApplication(deps, clientId);
  const presented = sha256(secret);
  const ok = app.secret_hash !== null && constantTimeEqual(presented, app.secret_hash);
  return ok && app.profile && !app.disabled ? app : null;
}
