// The rules of GET /oauth/authorize (spec §4 "OAuth endpoints" 1, RFC 6749 §4.1.1 and §4.1.2.1, RFC 7636):
// pure, from the query string and the application it names to one of three outcomes.

import { canonicalScopes, isScope, type Scope, scopesWithoutCompanion } from '../../src/core/scopes';
import { charCount } from '../../src/core/text';
import type { ApplicationState } from './applications';
import { CHALLENGE } from './pkce';

export interface AuthorizationRequest {
  client_id: string;
  redirect_uri: string;
  scopes: Scope[];
  state: string;
  code_challenge: string;
  restaurant_hint: string | null;
}

export type AuthorizeOutcome =
  /** Never redirected (an unknown or disabled client, a redirect_uri not registered): shown to the user. */
  | { kind: 'show'; message: string }
  /** Redirected to the (registered) redirect_uri with `error`, `error_description` and `state`. */
  | {
      kind: 'redirect';
      redirect_uri: string;
      error: 'invalid_request' | 'invalid_scope' | 'unsupported_response_type' | 'access_denied';
      description: string;
      state: string | null;
    }
  | { kind: 'ok'; request: AuthorizationRequest };

export type RawQuery = Record<string, string | string[] | undefined>;

/** The parameters of an authorization request (spec §4 "OAuth endpoints" 1); any other is ignored. */
const AUTHORIZE_PARAMETERS: readonly string[] = [
  'client_id',
  'redirect_uri',
  'response_type',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'restaurant_hint',
];

const single = (q: RawQuery, name: string): string | undefined | 'repeated' => {
  const v = q[name];
  if (Array.isArray(v)) return 'repeated';
  return v;
};

/**
 * Applications are looked up by the caller; `app` is the state of the stream `client_id` names.
 * `notText` names the parameters whose %-escapes are malformed or not UTF-8 (`state=%E9`): the query
 * parser reads them as U+FFFD, so such a state could not be returned as it was sent (RFC 6749 §4.1.2).
 */
export function checkAuthorizeRequest(
  q: RawQuery,
  app: ApplicationState | null,
  notText: readonly string[] = [],
): AuthorizeOutcome {
  const clientId = single(q, 'client_id');
  if (clientId === undefined || clientId === '')
    return { kind: 'show', message: 'The application did not say who it is (client_id is missing).' };
  if (clientId === 'repeated') return { kind: 'show', message: 'client_id is given more than once.' };
  if (!app?.profile) return { kind: 'show', message: 'This application is not registered with Couvert.' };
  if (app.disabled)
    return { kind: 'show', message: 'This application has been disabled by the Couvert operator.' };
  const redirectUri = single(q, 'redirect_uri');
  if (redirectUri === undefined || redirectUri === '')
    return {
      kind: 'show',
      message: 'The application did not say where to send you back (redirect_uri is missing).',
    };
  if (redirectUri === 'repeated') return { kind: 'show', message: 'redirect_uri is given more than once.' };
  // Character for character: scheme, host, port, path and query (spec §5).
  if (!app.profile.redirect_uris.includes(redirectUri))
    return {
      kind: 'show',
      message:
        'The address the application asked to send you back to is not one it registered, so you are not sent there.',
    };

  // Not redirected: the client could not recognise its own state, and the error would say nothing to it.
  if (notText.includes('state'))
    return {
      kind: 'show',
      message:
        'The application sent a state that is not text (a %-escape that is malformed or not UTF-8), so it cannot be sent back as it came: the application must encode it as UTF-8.',
    };
  const stateRaw = single(q, 'state');
  const state = typeof stateRaw === 'string' && stateRaw !== 'repeated' ? stateRaw : null;
  const refuse = (
    error: 'invalid_request' | 'invalid_scope' | 'unsupported_response_type',
    description: string,
  ) => ({ kind: 'redirect', redirect_uri: redirectUri, error, description, state }) as const;

  // This request's parameters only: others are ignored (RFC 6749 §3.1), repeated or not (RFC 8707's
  // `resource` is repeated by design), as at the token endpoint.
  const repeated = Object.entries(q)
    .filter(([k, v]) => Array.isArray(v) && AUTHORIZE_PARAMETERS.includes(k))
    .map(([k]) => k);
  if (repeated.length) return refuse('invalid_request', `repeated parameter: ${repeated.sort().join(', ')}`);
  const garbled = AUTHORIZE_PARAMETERS.filter((k) => notText.includes(k));
  if (garbled.length)
    return refuse(
      'invalid_request',
      `${garbled.join(', ')}: a %-escape that is malformed or not UTF-8 (encode the value as UTF-8)`,
    );
  const responseType = q.response_type as string | undefined;
  if (!responseType) return refuse('invalid_request', 'response_type is required');
  if (responseType !== 'code')
    return refuse('unsupported_response_type', 'only response_type=code is supported');
  if (!state) return refuse('invalid_request', 'state is required');
  if (charCount(state) > 1024) return refuse('invalid_request', 'state is longer than 1024 characters');
  const scope = q.scope as string | undefined;
  if (scope === undefined) return refuse('invalid_request', 'scope is required');
  const names = scope.split(' ').filter(Boolean);
  if (!names.length) return refuse('invalid_scope', 'scope names no scope');
  const unknown = names.filter((s) => !isScope(s));
  if (unknown.length) return refuse('invalid_scope', `unknown scope: ${unknown.join(', ')}`);
  const notAllowed = names.filter((s) => !app.profile?.allowed_scopes.includes(s as Scope));
  if (notAllowed.length)
    return refuse('invalid_scope', `scope not allowed for this application: ${notAllowed.join(', ')}`);
  // The consent page would promise what the token could not do (customer writes need both, spec §5).
  const lone = scopesWithoutCompanion(names);
  if (lone.length)
    return refuse(
      'invalid_scope',
      lone.map((l) => `${l.scope} also requires ${l.needs}: ask for both`).join('; '),
    );
  const challenge = q.code_challenge as string | undefined;
  const method = q.code_challenge_method as string | undefined;
  if (!challenge) return refuse('invalid_request', 'code_challenge is required (PKCE)');
  if (!method) return refuse('invalid_request', 'code_challenge_method is required (S256)');
  if (method !== 'S256')
    return refuse('invalid_request', 'code_challenge_method must be S256 (plain is refused)');
  if (!CHALLENGE.test(challenge))
    return refuse(
      'invalid_request',
      'code_challenge must be the 43-character base64url SHA-256 of the verifier',
    );
  // Optional: sent without a value, it is as if omitted (RFC 6749 §3.1), as a client filling a URL
  // template with no hint sends it.
  const hint = (q.restaurant_hint as string | undefined) || undefined;
  if (hint !== undefined && charCount(hint) > 64)
    return refuse('invalid_request', 'restaurant_hint must be at most 64 characters');
  return {
    kind: 'ok',
    request: {
      client_id: clientId,
      redirect_uri: redirectUri,
      scopes: canonicalScopes(names),
      state,
      code_challenge: challenge,
      restaurant_hint: hint ?? null,
    },
  };
}

/**
 * The redirect back to the application: its own query kept as registered (RFC 6749 §3.1.2: retained,
 * not re-encoded through `searchParams`, which wrote `a%20b` as `a+b` and `flag` as `flag=`), ours
 * appended, plus `iss` (RFC 9207).
 */
export function redirectTo(
  redirectUri: string,
  params: Record<string, string | null>,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  const ours = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) ours.append(k, v);
  ours.append('iss', issuer);
  const own = url.search.replace(/^\?/, '').replace(/&+$/, '');
  url.search = own ? `${own}&${ours}` : ours.toString();
  return url.toString();
}
