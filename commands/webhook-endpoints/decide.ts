// Webhook endpoint rules (pure): what a URL, custom headers and event types may be, and what each
// command appends.

import {
  ApiError,
  conflict,
  type Issue,
  notFound,
  unprocessable,
  validationError,
} from '../../src/core/errors';
import { hasSpaceOrControl, SPACE_OR_CONTROL_PROBLEM } from '../../src/core/urls';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { targetUrlProblem } from '../../src/webhooks/target';
import {
  type ApiVersion,
  type DeletionReason,
  defaultOwner,
  type EndpointSettings,
  V1_EVENT_TYPES,
  type V1EventType,
  visibleTo,
} from './events';

export interface EndpointRecord extends EndpointSettings {
  endpoint_id: string;
  restaurant_id: string;
  credential_id: string;
  /** Who may see and manage it (`key:<id>`, `app:<id>`), as the read model's `owner`. */
  owner: string;
  api_version: ApiVersion;
  secret: string;
  previous_secret: OldSecret | null;
  /** Secrets of rotations before the last one still in their grace (OldSecrets; absent: none). */
  earlier_secrets?: OldSecret[];
  created_at: string;
  updated_at: string;
}

/** A secret a rotation replaced (sealed), and until when it still signs. */
export interface OldSecret {
  secret: string;
  expires_at: string;
}

/**
 * The previous secret a rotation left still signs beside the new one until its grace period ends
 * (pure): what the publisher and a test delivery sign with, and what the dashboard lists.
 */
export const previousSecretSigns = (
  e: { previous_secret: { expires_at: string } | null },
  now: Date,
): boolean => e.previous_secret !== null && Date.parse(e.previous_secret.expires_at) > now.getTime();

/** How many secrets of rotations before the last one may still sign beside it (their grace running). */
export const MAX_EARLIER_SECRETS = 4;

/**
 * The old secrets after a rotation (pure; the write side's fold and the read model's, from the event
 * alone): the secret it replaced in `previous_secret`, and those earlier rotations replaced whose grace
 * still runs at the rotation in `earlier_secrets` (newest first), each until its own expiry or the new
 * rotation's, whichever comes first. A second rotation within the first one's grace (two at once, or a
 * retried call whose first answer was lost) thus keeps the secret receivers hold signing: it stopped at
 * once, though it was promised its grace period. A rotation with `grace_period_seconds: 0` (a leaked
 * secret) stops them all.
 */
export function afterRotation(
  e: { previous_secret: OldSecret | null; earlier_secrets?: readonly OldSecret[] },
  d: { previous_secret: string; previous_expires_at: string; at: string },
): { previous_secret: OldSecret; earlier_secrets: OldSecret[] } {
  const at = Date.parse(d.at);
  const until = Date.parse(d.previous_expires_at);
  const earlier: OldSecret[] = [];
  for (const old of [...(e.previous_secret ? [e.previous_secret] : []), ...(e.earlier_secrets ?? [])]) {
    if (earlier.length >= MAX_EARLIER_SECRETS) break;
    const expires = Date.parse(old.expires_at);
    if (!(expires > at) || !(until > at)) continue;
    earlier.push(expires <= until ? old : { secret: old.secret, expires_at: d.previous_expires_at });
  }
  return {
    previous_secret: { secret: d.previous_secret, expires_at: d.previous_expires_at },
    earlier_secrets: earlier,
  };
}

/** The sealed old secrets that still sign at `now`, the previous one first (pure). */
export function oldSecretsSigning(
  e: { previous_secret: OldSecret | null; earlier_secrets?: readonly OldSecret[] },
  now: Date,
): string[] {
  const out: string[] = [];
  for (const old of [...(e.previous_secret ? [e.previous_secret] : []), ...(e.earlier_secrets ?? [])])
    if (Date.parse(old.expires_at) > now.getTime()) out.push(old.secret);
  return out;
}

export interface EndpointState {
  endpoint: EndpointRecord | null;
  deleted: boolean;
  /** Slot revisions (limit.ts) whose creation was given up before it came: that attempt may not create. */
  abandoned: readonly number[];
}
export const initialEndpoint: EndpointState = { endpoint: null, deleted: false, abandoned: [] };

export function evolveEndpoint(state: EndpointState, event: RecordedEvent): EndpointState {
  const d = event.data as Record<string, unknown>;
  const e = state.endpoint;
  switch (event.type) {
    case 'WebhookEndpointCreated':
      return {
        deleted: false,
        abandoned: state.abandoned,
        endpoint: {
          endpoint_id: d.endpoint_id as string,
          restaurant_id: d.restaurant_id as string,
          credential_id: d.credential_id as string,
          // An endpoint created before owners were recorded is its key's (projections/webhook-endpoints.ts).
          owner: (d.owner as string | undefined) ?? defaultOwner(d.credential_id as string),
          api_version: d.api_version as ApiVersion,
          url: d.url as string,
          description: (d.description as string | null) ?? null,
          enabled_events: d.enabled_events as string[],
          headers: (d.headers as Record<string, string>) ?? {},
          disabled: Boolean(d.disabled),
          secret: d.secret as string,
          previous_secret: null,
          created_at: d.at as string,
          updated_at: d.at as string,
        },
      };
    case 'WebhookEndpointUpdated':
      return e
        ? {
            ...state,
            endpoint: { ...e, ...(d.changes as Partial<EndpointSettings>), updated_at: d.at as string },
          }
        : state;
    case 'WebhookEndpointSecretRotated':
      return e
        ? {
            ...state,
            endpoint: {
              ...e,
              secret: d.secret as string,
              ...afterRotation(e, d as { previous_secret: string; previous_expires_at: string; at: string }),
              updated_at: d.at as string,
            },
          }
        : state;
    case 'WebhookEndpointMigrated':
      return e ? { ...state, endpoint: { ...e, api_version: 'v1', updated_at: d.at as string } } : state;
    case 'WebhookEndpointDeleted':
      return { ...state, deleted: true };
    case 'WebhookEndpointAbandoned':
      return e ? state : { ...state, abandoned: [...state.abandoned, d.slot_revision as number] };
    default:
      return state;
  }
}

/**
 * The read scope an event type needs (spec §5-6: an endpoint receives only what its credential can
 * read; each event type requires the matching read scope): a reservation event, v1 or the legacy
 * RESERVATION_UPDATED, RESERVATIONS_READ; a customer event CUSTOMERS_READ; anything else (a test
 * delivery) none. The one statement of the rule: what an endpoint may subscribe to, what the fan-out
 * sends and what a retry or a resend may still send all ask it.
 */
export function readScopeOf(eventType: string): 'RESERVATIONS_READ' | 'CUSTOMERS_READ' | null {
  if (eventType.startsWith('reservation.') || eventType === 'RESERVATION_UPDATED') return 'RESERVATIONS_READ';
  if (eventType.startsWith('customer.')) return 'CUSTOMERS_READ';
  return null;
}

/** The v1 types a credential's scopes can read (spec §5: endpoints receive only what their key can read). */
export function readableTypes(scopes: Iterable<string>): V1EventType[] {
  const set = new Set(scopes);
  return V1_EVENT_TYPES.filter((t) => {
    const needs = readScopeOf(t);
    return needs === null || set.has(needs);
  });
}

/**
 * Whether a credential's scopes, now, read what a delivery's body holds (pure): the event type's read
 * scope (`readScopeOf`), and for a body with contact details (a `_sensitive` payload)
 * RESERVATIONS_READ_SENSITIVE. A body is built at the fan-out, with the scopes then: a retry or a
 * resend after a scope was taken away must not send it (spec §5).
 */
export function scopesReadDelivery(
  scopes: Iterable<string>,
  eventType: string,
  payload: string | null,
): boolean {
  const set = new Set(scopes);
  const needs = readScopeOf(eventType);
  if (needs && !set.has(needs)) return false;
  return !payload?.endsWith('_sensitive') || set.has('RESERVATIONS_READ_SENSITIVE');
}

/** Why an endpoint's settings now refuse a delivery made before (see `refusedBySettings`). */
export type SettingsRefusal = 'endpoint_disabled' | 'event_type_disabled' | 'endpoint_migrated';

/**
 * Whether an endpoint, as it is set now, still takes a delivery of `eventType` made before (pure): a
 * retry or a resend is sent only while the endpoint would receive that event if it happened now. A
 * disabled endpoint takes nothing; a v1 endpoint only the v1 types its `enabled_events` names (or
 * `*`), and never a legacy RESERVATION_UPDATED made before its migration (migration is final: from
 * then on it receives the v1 format only); a legacy endpoint its RESERVATION_UPDATED whatever its
 * `enabled_events` (the fan-out never filters legacy deliveries by them). Null when it takes it.
 * Scopes are `scopesReadDelivery`'s rule, the API option `barredByApiOption`'s.
 */
export function refusedBySettings(
  e: { disabled: boolean; api_version: ApiVersion; enabled_events: readonly string[] },
  eventType: string,
): SettingsRefusal | null {
  if (e.disabled) return 'endpoint_disabled';
  if (eventType === 'RESERVATION_UPDATED') return e.api_version === 'legacy' ? null : 'endpoint_migrated';
  if (e.api_version === 'legacy') return null;
  return e.enabled_events.includes('*') || e.enabled_events.includes(eventType)
    ? null
    : 'event_type_disabled';
}

/** Headers a partner may not set: the reserved prefix, hop-by-hop and framing headers, and anything carrying credentials. */
const FORBIDDEN_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'proxy-authenticate',
  'www-authenticate',
  'cookie',
  'set-cookie',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'expect',
  'service-signature',
  'user-agent',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
export const MAX_HEADERS = 20;
/** A custom header's value: printable ASCII, spaces and tabs (never CR or LF). */
export const HEADER_VALUE = /^[\x20-\x7e\t]*$/;
/**
 * A webhook URL's characters: no space or control character anywhere. The URL parser would drop them
 * at the ends and tabs and line breaks inside, so the endpoint would be stored as sent and reached at
 * another URL than the one shown.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
export const URL_CHARACTERS = /^[^\x00-\x20\x7f]*$/;

/** Issues for custom headers, at `headers.<name>`: 400 when any. */
export function headerIssues(headers: Record<string, string>): Issue[] {
  const issues: Issue[] = [];
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS)
    issues.push({ path: 'headers', code: 'out_of_range', message: `at most ${MAX_HEADERS} headers` });
  const seen = new Set<string>();
  for (const name of names) {
    const lower = name.toLowerCase();
    const path = `headers.${name}`;
    const value = headers[name] as string;
    if (!TOKEN.test(name) || name.length > 100)
      issues.push({ path, code: 'invalid_format', message: 'a header name is 1 to 100 token characters' });
    else if (lower.startsWith('x-service-'))
      issues.push({
        path,
        code: 'reserved_header',
        message: 'the X-Service- prefix is reserved for the service',
      });
    else if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-'))
      issues.push({
        path,
        code: 'reserved_header',
        message: 'hop-by-hop, framing and credential headers cannot be set',
      });
    else if (seen.has(lower))
      issues.push({
        path,
        code: 'invalid_format',
        message: 'the same header is named twice (names are case-insensitive)',
      });
    // Visible ASCII and spaces/tabs inside: no CR/LF (header injection), no other control characters.
    else if (!HEADER_VALUE.test(value) || value.length > 1000)
      issues.push({
        path,
        code: 'invalid_format',
        message: 'a header value is at most 1000 printable ASCII characters',
      });
    seen.add(lower);
  }
  return issues;
}

export interface SettingsInput {
  url?: string;
  description?: string | null;
  enabled_events?: string[];
  headers?: Record<string, string>;
  disabled?: boolean;
}

/**
 * 400 for malformed values of what a create or update sets (URL, headers, event types). The commands
 * check it before anything else, before looking the endpoint up (README: the body's 400 comes before
 * the path's 404); the routes only parse.
 */
export function refuseMalformedSettings(input: SettingsInput, allowPrivate: boolean): void {
  const issues: Issue[] = [];
  if (input.url !== undefined) {
    // Checked when saved only (an endpoint saved before keeps being sent to): src/core/urls.ts says why.
    const problem = hasSpaceOrControl(input.url)
      ? SPACE_OR_CONTROL_PROBLEM
      : targetUrlProblem(input.url, allowPrivate);
    if (problem) issues.push({ path: 'url', code: 'invalid_format', message: `url ${problem}` });
  }
  if (input.headers) issues.push(...headerIssues(input.headers));
  const events = input.enabled_events;
  if (events) {
    if (events.includes('*') && events.length > 1)
      issues.push({ path: 'enabled_events', code: 'invalid_format', message: '["*"] stands alone' });
    for (const [i, t] of events.entries())
      if (t !== '*' && !(V1_EVENT_TYPES as readonly string[]).includes(t))
        issues.push({
          path: `enabled_events.${i}`,
          code: 'invalid_enum',
          message: `must be "*" or one of ${V1_EVENT_TYPES.join(', ')}`,
        });
    if (new Set(events).size !== events.length)
      issues.push({ path: 'enabled_events', code: 'invalid_format', message: 'items must be distinct' });
  }
  // Worded as every other refusal of a body (src/http/validate.ts): these are the body's values.
  if (issues.length) throw validationError(issues, 'The request body is invalid');
}

export interface SettingsRules {
  allowPrivate: boolean;
  scopes: Iterable<string>;
  /** False: `["*"]` is taken from a credential that reads no event type yet (a legacy endpoint, a bootstrap file). */
  requireReadable?: boolean;
}

/** Checks what a create sets. 400 for malformed values, 422 for types the credential cannot read. */
export function checkSettings(input: SettingsInput, rules: SettingsRules): void {
  refuseMalformedSettings(input, rules.allowPrivate);
  refuseUnreadableEvents(input, rules);
}

/**
 * 422 for event types the credential cannot read (spec §5), once the values are well formed: an update
 * asks it once the endpoint is found (README: the path's 404 before the body's 422).
 */
export function refuseUnreadableEvents(
  input: SettingsInput,
  rules: Pick<SettingsRules, 'scopes' | 'requireReadable'>,
): void {
  const events = input.enabled_events;
  if (events) {
    const readable = new Set<string>(readableTypes(rules.scopes));
    const unreadable = events.flatMap((t, i) =>
      t !== '*' && !readable.has(t)
        ? [
            {
              path: `enabled_events.${i}`,
              code: 'insufficient_scope',
              message: `${t} needs ${readScopeOf(t)}, which this credential does not hold`,
            },
          ]
        : [],
    );
    if (unreadable.length) throw unprocessable(unreadable, 'The credential cannot read these event types');
    if (events[0] === '*' && readable.size === 0 && rules.requireReadable !== false)
      throw unprocessable(
        [
          {
            path: 'enabled_events',
            code: 'insufficient_scope',
            message: 'this credential can read no event type (RESERVATIONS_READ or CUSTOMERS_READ)',
          },
        ],
        'The credential cannot read any event type',
      );
  }
}

export interface CreateEndpointData extends EndpointSettings {
  endpoint_id: string;
  restaurant_id: string;
  credential_id: string;
  /** Who may see and manage it: `key:<id>`, or `app:<id>` for the OAuth tokens of one application. */
  owner: string;
  api_version: ApiVersion;
  secret: string;
  at: string;
}

/**
 * `slotRevision`: the revision of the restaurant's slot this creation took (limit.ts). A creation that
 * was fenced as abandoned (it took longer than ABANDONED_AFTER_MS) is refused: its slot was given back.
 */
export function decideCreateEndpoint(
  state: EndpointState,
  data: CreateEndpointData,
  slotRevision?: number,
): NewEvent[] {
  if (!state.endpoint && slotRevision !== undefined && state.abandoned.includes(slotRevision))
    throw conflict('Creating this webhook endpoint took too long and was given up; create it again');
  if (state.endpoint) {
    const e = state.endpoint;
    // The same endpoint created again (a bootstrap applied twice): nothing to do.
    if (
      !state.deleted &&
      e.restaurant_id === data.restaurant_id &&
      e.url === data.url &&
      e.credential_id === data.credential_id
    )
      return [];
    throw new ApiError(409, 'RESOURCE_CONFLICT', `webhook endpoint ${data.endpoint_id} already exists`);
  }
  return [{ type: 'WebhookEndpointCreated', data: { ...data } }];
}

/**
 * Fences a creation that took a slot and never came (its process died): [] once the endpoint exists
 * (the creation landed after all) or this slot is fenced already.
 */
export function decideAbandon(
  state: EndpointState,
  endpointId: string,
  restaurantId: string,
  slotRevision: number,
  at: string,
): NewEvent[] {
  if (state.endpoint || state.abandoned.includes(slotRevision)) return [];
  return [
    {
      type: 'WebhookEndpointAbandoned',
      data: { endpoint_id: endpointId, restaurant_id: restaurantId, slot_revision: slotRevision, at },
    },
  ];
}

/**
 * The live endpoint of this restaurant, or 404 (another restaurant's id answers 404 too); with `owner`,
 * of that owner only (a partner's credential sees its own endpoints: another's answers 404, as
 * `getEndpoint` in queries/webhooks.ts).
 */
export function liveEndpoint(
  state: EndpointState,
  restaurantId: string | null,
  id: string,
  owner: string | null = null,
): EndpointRecord {
  const e = state.endpoint;
  if (!e || state.deleted || !visibleTo(e, { restaurantId, owner })) throw notFound(`webhook endpoint ${id}`);
  return e;
}

/**
 * `changes` are well formed (`refuseMalformedSettings`, asked first); the endpoint is looked up (404),
 * then the event types are checked against the caller's scopes (422), then the change is decided.
 */
export function decideUpdateEndpoint(
  state: EndpointState,
  scope: { restaurantId: string | null; owner?: string | null },
  id: string,
  changes: Partial<EndpointSettings>,
  rules: Pick<SettingsRules, 'scopes' | 'requireReadable'>,
  at: string,
): NewEvent[] {
  const e = liveEndpoint(state, scope.restaurantId, id, scope.owner ?? null);
  refuseUnreadableEvents(changes, rules);
  const diff: Partial<EndpointSettings> = {};
  const previous: Partial<EndpointSettings> = {};
  for (const key of ['url', 'description', 'enabled_events', 'headers', 'disabled'] as const) {
    const next = changes[key];
    if (next === undefined) continue;
    if (JSON.stringify(next) === JSON.stringify(e[key])) continue;
    (diff as Record<string, unknown>)[key] = next;
    (previous as Record<string, unknown>)[key] = e[key];
  }
  if (!Object.keys(diff).length) return [];
  return [
    {
      type: 'WebhookEndpointUpdated',
      data: { endpoint_id: id, restaurant_id: e.restaurant_id, changes: diff, previous, at },
    },
  ];
}

export const DEFAULT_GRACE_SECONDS = 24 * 3600;

export function decideRotateSecret(
  state: EndpointState,
  restaurantId: string | null,
  id: string,
  sealedNew: string,
  graceSeconds: number,
  now: Date,
): NewEvent[] {
  const e = liveEndpoint(state, restaurantId, id);
  return [
    {
      type: 'WebhookEndpointSecretRotated',
      data: {
        endpoint_id: id,
        restaurant_id: e.restaurant_id,
        secret: sealedNew,
        previous_secret: e.secret,
        previous_expires_at: new Date(now.getTime() + graceSeconds * 1000).toISOString(),
        at: now.toISOString(),
      },
    },
  ];
}

/** Legacy → v1, once: migration is final (spec §9); migrating a v1 endpoint changes nothing. */
export function decideMigrate(
  state: EndpointState,
  restaurantId: string | null,
  id: string,
  at: string,
): NewEvent[] {
  const e = liveEndpoint(state, restaurantId, id);
  if (e.api_version === 'v1') return [];
  return [
    {
      type: 'WebhookEndpointMigrated',
      data: { endpoint_id: id, restaurant_id: e.restaurant_id, from: 'legacy', to: 'v1', at },
    },
  ];
}

export function decideDeleteEndpoint(
  state: EndpointState,
  restaurantId: string | null,
  id: string,
  reason: DeletionReason,
  at: string,
): NewEvent[] {
  // Deleting twice (a revocation replayed after a crash) appends nothing.
  if (
    state.deleted &&
    state.endpoint &&
    (restaurantId === null || state.endpoint.restaurant_id === restaurantId)
  )
    return [];
  const e = liveEndpoint(state, restaurantId, id);
  return [
    {
      type: 'WebhookEndpointDeleted',
      data: { endpoint_id: id, restaurant_id: e.restaurant_id, reason, credential_id: e.credential_id, at },
    },
  ];
}
