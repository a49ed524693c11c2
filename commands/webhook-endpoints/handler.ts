// Webhook endpoint commands. Each takes the actor in `meta` (a partner's credential, a manager from the
// dashboard, an operator, the system on a revocation) and a restaurant id to check tenancy against
// (null: an operator acting on any restaurant).

import { loadStream, runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { unauthorized } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import type { Secrets } from '../../src/secrets';
import { generateSigningSecret } from '../../src/webhooks/signature';
import { evolveApiKey, initialApiKey } from '../credentials/decide';
import { apiKeyStream } from '../credentials/events';
import { loadApplication } from '../oauth/application-handler';
import { cutOffBars } from '../oauth/cut-off';
import { cancelDeliveriesNotTaken } from '../webhook-deliveries/handler';
import {
  checkSettings,
  DEFAULT_GRACE_SECONDS,
  decideCreateEndpoint,
  decideDeleteEndpoint,
  decideMigrate,
  decideRotateSecret,
  decideUpdateEndpoint,
  type EndpointState,
  evolveEndpoint,
  initialEndpoint,
  refuseMalformedSettings,
  type SettingsInput,
} from './decide';
import type { ApiVersion, DeletionReason, EndpointSettings } from './events';
import { defaultOwner, webhookEndpointStream } from './events';
import { headersSealed, maskedHeaders, openHeaders, resolveKeptHeaders, sealHeaders } from './header-secrets';
import { MAX_ENDPOINTS_PER_RESTAURANT } from './limit';
import { releaseEndpointSlot, takeEndpointSlot } from './limit-handler';

export interface EndpointDeps extends WriteDeps {
  secrets: Secrets;
  config: { webhookAllowPrivateTargets: boolean };
}

/**
 * With the read models (every caller but a bootstrap file's), a change that makes the endpoint refuse
 * deliveries still pending cancels them at once (`cancelDeliveriesNotTaken`); without, the publisher
 * cancels each at its next attempt (the same rule).
 */
type MaybeDocs = { docs?: DocumentStore };

/** Cancels what the endpoint, as `state` leaves it, no longer takes; the position to settle. */
async function cancelNotTaken(
  deps: WriteDeps & MaybeDocs,
  id: string,
  state: EndpointState,
  position: bigint | null,
  meta: CommandMeta,
): Promise<bigint | null> {
  if (!deps.docs || !state.endpoint) return position;
  const canceled = await cancelDeliveriesNotTaken(
    { events: deps.events, clock: deps.clock, docs: deps.docs },
    id,
    state.deleted ? null : state.endpoint,
    { ...meta, restaurant_id: state.endpoint.restaurant_id },
  );
  return canceled !== null && (position === null || canceled > position) ? canceled : position;
}

export interface CreateEndpointInput extends SettingsInput {
  restaurantId: string;
  url: string;
  /** The owning credential and the scopes enabled_events are checked against. */
  credential: { id: string; scopes: Iterable<string>; owner?: string };
  apiVersion?: ApiVersion;
  /** Given by a bootstrap file (legacy endpoints); otherwise generated. */
  secret?: string;
  endpointId?: string;
  /** Accept an endpoint whose credential can read no event type yet (bootstrap files). */
  allowUnreadable?: boolean;
  /**
   * Not refused at MAX_ENDPOINTS_PER_RESTAURANT (bootstrap files, which never were); the endpoint
   * still takes a slot, so it counts for the others.
   */
  beyondLimit?: boolean;
}

const load = (id: string) => ({
  stream: webhookEndpointStream(id),
  initial: initialEndpoint,
  evolve: evolveEndpoint,
});

/**
 * Returns the plain signing secret: the only time it leaves the service. Takes one of the restaurant's
 * slots first (limit.ts: 422 ENDPOINT_LIMIT_REACHED when they are all held). A creation that fails
 * after that keeps its slot until a take finds the stream full and sees it never came.
 */
export async function createWebhookEndpoint(
  deps: EndpointDeps,
  input: CreateEndpointInput,
  meta: CommandMeta,
) {
  const scopes = [...input.credential.scopes];
  checkSettings(input, {
    allowPrivate: deps.config.webhookAllowPrivateTargets,
    scopes,
    requireReadable: !input.allowUnreadable,
  });
  // A new endpoint has no value to keep (header-secrets.ts).
  resolveKeptHeaders(input.headers ?? {}, {});
  const endpointId = input.endpointId ?? newId('we');
  const secret = input.secret ?? generateSigningSecret();
  const settings: EndpointSettings = {
    url: input.url,
    description: input.description ?? null,
    enabled_events: input.enabled_events ?? ['*'],
    headers: input.headers ?? {},
    disabled: input.disabled ?? false,
  };
  const metadata = { ...meta, restaurant_id: input.restaurantId };
  const slot = await takeEndpointSlot(
    deps,
    input.restaurantId,
    endpointId,
    input.beyondLimit ? null : MAX_ENDPOINTS_PER_RESTAURANT,
    metadata,
  );
  const outcome = await runCommand<EndpointState>(deps.events, {
    ...load(endpointId),
    metadata,
    clock: deps.clock,
    decide: (s) =>
      decideCreateEndpoint(
        s,
        {
          ...settings,
          headers: sealHeaders(settings.headers, deps.secrets),
          endpoint_id: endpointId,
          restaurant_id: input.restaurantId,
          credential_id: input.credential.id,
          owner: input.credential.owner ?? defaultOwner(input.credential.id),
          api_version: input.apiVersion ?? 'v1',
          secret: deps.secrets.seal(secret),
          at: deps.clock.now().toISOString(),
        },
        slot.revision,
      ),
  });
  // A revocation that landed while this endpoint was being created found nothing to delete (the
  // publisher deletes a revoked credential's endpoints as the read models show them at the revocation):
  // read the credential again, as the token endpoint does, and delete it now. Any later revocation
  // finds the endpoint in the read models. A token its application's cut-off bars is withdrawn too
  // (queries/api-keys.ts keyWithdrawn), revoked or not yet: fan-out would skip the endpoint silently.
  if (await credentialWithdrawn(deps, input.credential.id)) {
    await deleteWebhookEndpoint(deps, input.restaurantId, endpointId, 'CREDENTIAL_REVOKED', meta);
    throw unauthorized(
      'INVALID_AUTHENTICATION',
      'The credential was revoked or cut off while the endpoint was being created; the endpoint is deleted',
      'invalid_token',
    );
  }
  return { ...outcome, position: outcome.position ?? slot.position, endpointId, secret };
}

/**
 * keyWithdrawn from the log: the key revoked, or an OAuth token issued before its application's
 * cut-off (`cutOffBars`: the read model marks it `cut_off_at` only once the projection gets there).
 */
async function credentialWithdrawn(deps: EndpointDeps, keyId: string): Promise<boolean> {
  const credential = await loadStream(deps.events, apiKeyStream(keyId), initialApiKey, evolveApiKey);
  if (credential.state.revoked) return true;
  const app = credential.state.key?.type === 'OAUTH' ? credential.state.key.application : null;
  if (!app) return false;
  const created = credential.events[0]?.position ?? null;
  return cutOffBars(created, (await loadApplication(deps, app.id)).cut_off_position);
}

/**
 * The one place an update's settings are checked (the routes only parse), in README's order: 400 for a
 * malformed value first, then 404 for an endpoint the caller may not see (another restaurant's, or with
 * `options.owner`, another credential's), then 422 for an event type its scopes cannot read.
 */
export async function updateWebhookEndpoint(
  deps: EndpointDeps & MaybeDocs,
  restaurantId: string | null,
  id: string,
  changes: SettingsInput,
  scopes: Iterable<string>,
  meta: CommandMeta,
  options: { allowUnreadable?: boolean; owner?: string } = {},
) {
  refuseMalformedSettings(changes, deps.config.webhookAllowPrivateTargets);
  const rules = { scopes: [...scopes], requireReadable: !options.allowUnreadable };
  const outcome = await runCommand<EndpointState>(deps.events, {
    ...load(id),
    metadata: meta,
    clock: deps.clock,
    decide: (s) => {
      // Decided on the values in clear (an equal value sealed again is no change), then sealed.
      const stored = s.endpoint?.headers ?? {};
      const current = openHeaders(stored, deps.secrets);
      const plain: EndpointState = s.endpoint ? { ...s, endpoint: { ...s.endpoint, headers: current } } : s;
      // An endpoint this caller may not see answers 404 (decideUpdateEndpoint), whatever the headers.
      const next =
        changes.headers && (s.endpoint ? resolveKeptHeaders(changes.headers, current) : changes.headers);
      // Headers an event wrote in clear before the sealing: saved again, even unchanged, sealed.
      const reseal = next !== undefined && !headersSealed(stored);
      const events = decideUpdateEndpoint(
        plain,
        { restaurantId, owner: options.owner ?? null },
        id,
        { ...(changes as Partial<EndpointSettings>), ...(next ? { headers: next } : {}) },
        rules,
        deps.clock.now().toISOString(),
      );
      if (reseal && next && !events.length)
        events.push({
          type: 'WebhookEndpointUpdated',
          data: {
            endpoint_id: id,
            restaurant_id: s.endpoint?.restaurant_id,
            changes: { headers: next },
            previous: { headers: current },
            at: deps.clock.now().toISOString(),
          },
        });
      return events.map((e) => ({
        ...e,
        data: withSealedHeaders(e.data as Record<string, unknown>, deps.secrets, reseal),
        metadata: { restaurant_id: s.endpoint?.restaurant_id ?? null },
      }));
    },
  });
  // Disabled, or fewer event types: what is still pending for it and no longer taken is canceled.
  const narrowed = changes.disabled === true || changes.enabled_events !== undefined;
  if (!outcome.appended.length || !narrowed) return outcome;
  return { ...outcome, position: await cancelNotTaken(deps, id, outcome.state, outcome.position, meta) };
}

/**
 * An update's `changes.headers` and `previous.headers` sealed. A previous value written in clear before
 * the sealing (`previousInClear`) is not restated: the new event would copy it, it reads as redacted.
 */
function withSealedHeaders(
  data: Record<string, unknown>,
  secrets: Secrets,
  previousInClear: boolean,
): Record<string, unknown> {
  const changes = data.changes as Partial<EndpointSettings> | undefined;
  const previous = data.previous as Partial<EndpointSettings> | undefined;
  if (!changes?.headers) return data;
  return {
    ...data,
    changes: { ...changes, headers: sealHeaders(changes.headers, secrets) },
    previous: {
      ...previous,
      ...(previous?.headers
        ? {
            headers: previousInClear
              ? maskedHeaders(previous.headers)
              : sealHeaders(previous.headers, secrets),
          }
        : {}),
    },
  };
}

/** A new secret, returned once; the old one keeps signing beside it for `graceSeconds` (24 h by default). */
export async function rotateWebhookSecret(
  deps: EndpointDeps,
  restaurantId: string | null,
  id: string,
  graceSeconds: number | undefined,
  meta: CommandMeta,
) {
  const secret = generateSigningSecret();
  const sealed = deps.secrets.seal(secret);
  const outcome = await runCommand<EndpointState>(deps.events, {
    ...load(id),
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideRotateSecret(
        s,
        restaurantId,
        id,
        sealed,
        graceSeconds ?? DEFAULT_GRACE_SECONDS,
        deps.clock.now(),
      ).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.endpoint?.restaurant_id ?? null },
      })),
  });
  return { ...outcome, secret };
}

/** Final: the legacy deliveries still pending for it are canceled (it receives the v1 format only). */
export async function migrateWebhookEndpoint(
  deps: WriteDeps & MaybeDocs,
  restaurantId: string | null,
  id: string,
  meta: CommandMeta,
) {
  const outcome = await runCommand<EndpointState>(deps.events, {
    ...load(id),
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideMigrate(s, restaurantId, id, deps.clock.now().toISOString()).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.endpoint?.restaurant_id ?? null },
      })),
  });
  if (!outcome.appended.length) return outcome;
  return { ...outcome, position: await cancelNotTaken(deps, id, outcome.state, outcome.position, meta) };
}

/**
 * Every deletion (API, dashboard, a revoked credential's endpoints) gives the endpoint's slot back
 * after WebhookEndpointDeleted, also when the deletion was made before (a repeated deletion finishes
 * a release its process died before making).
 */
export async function deleteWebhookEndpoint(
  deps: WriteDeps & MaybeDocs,
  restaurantId: string | null,
  id: string,
  reason: DeletionReason,
  meta: CommandMeta,
) {
  const outcome = await runCommand<EndpointState>(deps.events, {
    ...load(id),
    metadata: meta,
    clock: deps.clock,
    decide: (s) =>
      decideDeleteEndpoint(s, restaurantId, id, reason, deps.clock.now().toISOString()).map((e) => ({
        ...e,
        metadata: { restaurant_id: s.endpoint?.restaurant_id ?? null },
      })),
  });
  const owner = outcome.state.endpoint?.restaurant_id;
  if (!owner || !outcome.state.deleted) return outcome;
  const released = await releaseEndpointSlot(deps, owner, id, 'DELETED', { ...meta, restaurant_id: owner });
  // Its pending deliveries are over (the publisher would cancel each at its next attempt anyway).
  const position = await cancelNotTaken(deps, id, outcome.state, released ?? outcome.position, meta);
  return { ...outcome, position };
}

export async function loadWebhookEndpoint(deps: WriteDeps, id: string): Promise<EndpointState> {
  return (await loadStream(deps.events, webhookEndpointStream(id), initialEndpoint, evolveEndpoint)).state;
}

/** The endpoint's last change (its stream's last event): its type, who made it, and what it changed. */
export async function lastEndpointChange(deps: WriteDeps, id: string) {
  const [last] = await deps.events.readStream(webhookEndpointStream(id), {
    direction: 'backwards',
    limit: 1,
  });
  if (!last) return null;
  const changes = (last.data as { changes?: Record<string, unknown> }).changes ?? {};
  return { type: last.type, actor: last.metadata.actor, changes };
}
