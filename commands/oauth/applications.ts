// Pure rules for OAuth applications: registration, changes, secret rotation, disabling.

import { ApiError, conflict, type Issue, notFound, validationError } from '../../src/core/errors';
import { charCount } from '../../src/core/text';
import {
  CSP_HOST_PROBLEM,
  hasSpaceOrControl,
  isCspHost,
  SPACE_OR_CONTROL_PROBLEM,
} from '../../src/core/urls';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { checkScopes } from '../credentials/decide';
import type { ApplicationProfile } from './events';

export interface ApplicationState {
  client_id: string | null;
  profile: ApplicationProfile | null;
  secret_hash: string | null;
  disabled: boolean;
  created_at: string | null;
  /**
   * The store position of its latest disabling with --disconnect: a code issued before it (a lower
   * position) grants nothing, even once the application is enabled again (docs/OAUTH.md).
   */
  cut_off_position: bigint | null;
}
export const initialApplication: ApplicationState = {
  client_id: null,
  profile: null,
  secret_hash: null,
  disabled: false,
  created_at: null,
  cut_off_position: null,
};

export function evolveApplication(state: ApplicationState, event: RecordedEvent): ApplicationState {
  const d = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'OAuthApplicationRegistered': {
      const { client_id, secret_hash, at, ...profile } = d as unknown as ApplicationProfile & {
        client_id: string;
        secret_hash: string;
        at: string;
      };
      return { ...initialApplication, client_id, profile, secret_hash, created_at: at };
    }
    case 'OAuthApplicationUpdated':
      return state.profile
        ? { ...state, profile: { ...state.profile, ...(d.changes as Partial<ApplicationProfile>) } }
        : state;
    case 'OAuthApplicationSecretRotated':
      return { ...state, secret_hash: d.secret_hash as string };
    case 'OAuthApplicationDisabled':
      return d.disconnect === true
        ? { ...state, disabled: true, cut_off_position: event.position }
        : { ...state, disabled: true };
    case 'OAuthApplicationEnabled':
      return { ...state, disabled: false };
    default:
      return state;
  }
}

export const CLIENT_ID_PATTERN = /^[A-Za-z0-9_-]{3,64}$/;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * A redirect URI partners may register: absolute, no fragment (RFC 6749 §3.1.2), https — or http on a
 * loopback address for development (RFC 8252 §7.3). It is then compared character for character.
 */
export function redirectUriProblem(uri: string): string | null {
  if (charCount(uri) > 2000) return 'is longer than 2000 characters';
  if (hasSpaceOrControl(uri)) return SPACE_OR_CONTROL_PROBLEM;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  if (uri.includes('#')) return 'must not carry a fragment (#…)';
  if (url.username || url.password) return 'must not carry a user name or password';
  // Named in the consent page's CSP (form-action): an IPv6 literal stands as its scheme (originOf).
  if (!url.hostname.startsWith('[') && !isCspHost(url.hostname)) return CSP_HOST_PROBLEM;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return 'must be https (http only on localhost, 127.0.0.1 or [::1])';
}

function logoProblem(logo: string): string | null {
  if (charCount(logo) > 2000) return 'is longer than 2000 characters';
  if (hasSpaceOrControl(logo)) return SPACE_OR_CONTROL_PROBLEM;
  try {
    const url = new URL(logo);
    if (url.protocol !== 'https:') return 'must be an https URL';
    if (url.username || url.password) return 'must not carry a user name or password';
    // Named in the consent page's CSP (img-src).
    if (!url.hostname.startsWith('[') && !isCspHost(url.hostname)) return CSP_HOST_PROBLEM;
    return null;
  } catch {
    return 'is not an absolute URL';
  }
}

/**
 * Checks a full or partial profile; every faulty field is named. Scopes come back canonical. `stored`,
 * the application's profile as recorded: a redirect URI or logo URL it already holds is kept as it is
 * (accepted when stored, under the rules of then: a host with `_` was), so a bootstrap file applied at
 * every start, or an update naming it again, is not refused for it; only a new or changed one is checked.
 */
export function checkProfile(
  p: Partial<ApplicationProfile>,
  stored?: ApplicationProfile | null,
): Partial<ApplicationProfile> {
  const issues: Issue[] = [];
  const out: Partial<ApplicationProfile> = { ...p };
  if (p.name !== undefined && (!p.name.trim() || charCount(p.name) > 200))
    issues.push({ path: 'name', code: 'out_of_range', message: 'name must be 1 to 200 characters' });
  if (p.logo_url !== undefined && p.logo_url !== null) {
    const why = p.logo_url === stored?.logo_url ? null : logoProblem(p.logo_url);
    if (why) issues.push({ path: 'logo_url', code: 'invalid_format', message: `logo_url ${why}` });
  }
  if (p.redirect_uris !== undefined) {
    if (p.redirect_uris.length < 1 || p.redirect_uris.length > 20)
      issues.push({ path: 'redirect_uris', code: 'out_of_range', message: 'give 1 to 20 redirect URIs' });
    p.redirect_uris.forEach((u, i) => {
      const why = stored?.redirect_uris.includes(u) ? null : redirectUriProblem(u);
      if (why) issues.push({ path: `redirect_uris.${i}`, code: 'invalid_format', message: `${u} ${why}` });
    });
    out.redirect_uris = [...new Set(p.redirect_uris)];
  }
  if (p.allowed_scopes !== undefined) {
    if (!p.allowed_scopes.length)
      issues.push({ path: 'allowed_scopes', code: 'required', message: 'give at least one scope' });
    else
      try {
        out.allowed_scopes = checkScopes(p.allowed_scopes);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        for (const i of (err.details?.issues as Issue[]) ?? []) issues.push({ ...i, path: 'allowed_scopes' });
      }
  }
  if (issues.length) throw validationError(issues, 'The application is invalid');
  return out;
}

export function decideRegister(
  state: ApplicationState,
  clientId: string,
  profile: ApplicationProfile,
  secretHash: string,
  at: string,
): NewEvent[] {
  if (!CLIENT_ID_PATTERN.test(clientId))
    throw validationError([
      { path: 'client_id', code: 'invalid_format', message: 'client_id is 3 to 64 of A-Z a-z 0-9 _ -' },
    ]);
  if (state.profile) throw conflict(`application ${clientId} already exists`);
  const checked = checkProfile(profile) as ApplicationProfile;
  return [
    {
      type: 'OAuthApplicationRegistered',
      data: { client_id: clientId, ...checked, secret_hash: secretHash, at },
    },
  ];
}

/** Only what differs is recorded; nothing differing appends nothing (a bootstrap file applied twice). */
export function decideUpdateApplication(
  state: ApplicationState,
  clientId: string,
  changes: Partial<ApplicationProfile>,
  at: string,
): NewEvent[] {
  if (!state.profile) throw notFound(`application ${clientId}`);
  const checked = checkProfile(changes, state.profile);
  const diff: Partial<ApplicationProfile> = {};
  for (const [k, v] of Object.entries(checked) as [keyof ApplicationProfile, unknown][])
    if (v !== undefined && JSON.stringify(v) !== JSON.stringify(state.profile[k]))
      (diff as Record<string, unknown>)[k] = v;
  if (!Object.keys(diff).length) return [];
  return [{ type: 'OAuthApplicationUpdated', data: { client_id: clientId, at, changes: diff } }];
}

export function decideRotateSecret(
  state: ApplicationState,
  clientId: string,
  secretHash: string,
  at: string,
): NewEvent[] {
  if (!state.profile) throw notFound(`application ${clientId}`);
  if (state.secret_hash === secretHash) return [];
  return [
    { type: 'OAuthApplicationSecretRotated', data: { client_id: clientId, secret_hash: secretHash, at } },
  ];
}

export function decideSetDisabled(
  state: ApplicationState,
  clientId: string,
  disabled: boolean,
  at: string,
  disconnect = false,
): NewEvent[] {
  if (!state.profile) throw notFound(`application ${clientId}`);
  // A cut-off is recorded even on a disabled application: the codes issued until now must go.
  if (state.disabled === disabled && !(disabled && disconnect)) return [];
  return [
    {
      type: disabled ? 'OAuthApplicationDisabled' : 'OAuthApplicationEnabled',
      data:
        disabled && disconnect ? { client_id: clientId, at, disconnect: true } : { client_id: clientId, at },
    },
  ];
}
