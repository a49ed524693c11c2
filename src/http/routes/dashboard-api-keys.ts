// Dashboard: API keys (create, revoke) through commands/credentials with the manager as actor.

import { createApiKey, revokeApiKey } from '../../../commands/credentials/handler';
import { API_KEYS, type ApiKeyDoc } from '../../../projections/api-keys';
import { keyWithdrawn } from '../../../queries/api-keys';
import { ApiError, type Issue } from '../../core/errors';
import { isScope, SCOPES, scopesWithoutCompanion } from '../../core/scopes';
import type { Runtime } from '../../runtime';
import { putFlash, takeFlash } from '../../web/flash';
import { isManager, type Manager, managerForAction, managerForPage } from '../../web/manager';
import { apiKeysPage } from '../../web/pages/api-key-pages';
import { confirmPage, sectionPath } from '../../web/pages/dashboard-shell';
import { page, pageNotFound, renderPageError, seeOther } from '../../web/respond';
import { restaurantKey } from '../../web/restaurant-keys';
import { SCOPE_WORDS } from '../../web/scope-words';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { type AnySchema, obj, optional, str } from '../schema';

const BASE = '/dashboard/api-keys';
/** A dashboard form: the CSRF token, the restaurant, the fields (open: a repeated checkbox is read with many()). */
export const form = <S extends Record<string, AnySchema>>(extra: S) =>
  obj({ csrf_token: str({ max: 200 }), restaurant_id: str({ max: 64 }), ...extra }, { open: true });

/** A form field sent once (a string) or several times (an array), as a list of strings. */
export const many = (v: unknown): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).filter((x): x is string => typeof x === 'string');

async function keysOf(rt: Runtime, restaurantId: string) {
  const all = await rt.docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find({ restaurant_id: restaurantId, type: 'API_KEY' }, { sort: { created_at: -1, _id: 1 } });
  // One rule with authentication (keyWithdrawn): a key that opens nothing is not listed as active.
  const revoked = all.filter(keyWithdrawn);
  return {
    keys: all.filter((k) => !keyWithdrawn(k)),
    revokedCount: revoked.length,
    revokedNames: revoked.map((k) => k.name),
  };
}

const render = async (
  rt: Runtime,
  m: Manager,
  o: Omit<Parameters<typeof apiKeysPage>[1], 'keys' | 'revokedCount'>,
) => apiKeysPage(m.shell, { ...(await keysOf(rt, m.restaurant._id)), ...o });

const issuesText = (issues: Issue[] | undefined, fallback: string) =>
  issues?.length ? issues.map((i) => i.message).join('; ') : fallback;

export const dashboardApiKeyRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: BASE,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardApiKeys',
    summary: 'API keys of a restaurant the signed-in user manages',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj(
      { restaurant: optional(str({ max: 64 })), revoked: optional(str({ max: 200 })) },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const flash = await takeFlash(rt, m.session, BASE);
      const listed = await keysOf(rt, m.restaurant._id);
      // Said only of a key of this restaurant that is revoked, and no active key of that name: a link
      // cannot announce a revocation that did not happen.
      const { revokedNames, ...shown } = listed;
      const revoked =
        query.revoked &&
        revokedNames.includes(query.revoked) &&
        !listed.keys.some((k) => k.name === query.revoked)
          ? query.revoked
          : null;
      return page(
        apiKeysPage(m.shell, {
          ...shown,
          notice: revoked ? `The key “${revoked}” is revoked.` : null,
          created: flash ? { name: flash.label, token: flash.value } : null,
        }),
      );
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/create`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardCreateApiKey',
    summary: 'Create an API key (its token is shown once)',
    tag: 'OAuth',
    access: PUBLIC,
    body: form({ name: optional(str({ max: 1000 })) }),
    bodyRequired: true,
    responses: { 303: { description: 'To API keys, where the token is shown once' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const name = (body.name ?? '').trim();
      const scopes = many((body as Record<string, unknown>).scopes);
      // Said in the form, next to the field it is about (the name, the permissions), not atop the page.
      const again = async (message: string, field: 'name' | 'scopes' | null = null) =>
        page(await render(rt, m, { form: { name, scopes, error: { message, field } } }), {}, 400);
      if (!name || name.length > 200) return again('Give the key a name (at most 200 characters).', 'name');
      if (!scopes.length) return again('Choose at least one thing the key can do.', 'scopes');
      // The form offers its checkboxes only: a value it never writes (scopes=ALL from a script) gets a
      // sentence naming what a key can have, not the command's bare "unknown scope ALL".
      const unknown = scopes.filter((s) => !isScope(s));
      if (unknown.length)
        return again(
          `${unknown
            .slice(0, 3)
            .map((s) => `“${s.slice(0, 64)}”`)
            .join(
              ', ',
            )}${unknown.length > 3 ? ` and ${unknown.length - 3} more` : ''} ${unknown.length === 1 ? 'is not a permission' : 'are not permissions'} a key can have: choose among ${SCOPES.slice(0, -1).join(', ')} and ${SCOPES.at(-1)}.`,
          'scopes',
        );
      const lone = scopesWithoutCompanion(scopes)[0];
      if (lone)
        return again(
          `“${SCOPE_WORDS[lone.scope]}” works only with “${SCOPE_WORDS[lone.needs]}”: choose both, or neither.`,
          'scopes',
        );
      try {
        const out = await createApiKey(rt, { restaurantId: m.restaurant._id, name, scopes }, m.meta);
        await rt.settle(out.position);
        // Shown once, on the page the redirect leads to: a reload creates nothing more.
        await putFlash(rt, m.session, { label: name, value: out.token, for: BASE });
        return seeOther(sectionPath('api-keys', m.restaurant._id));
      } catch (err) {
        if (err instanceof ApiError && err.status < 500)
          return again(issuesText(err.details?.issues as Issue[] | undefined, err.message));
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/revoke`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardRevokeApiKey',
    summary: 'Revoke an API key (after a confirmation)',
    tag: 'OAuth',
    access: PUBLIC,
    body: form({ key_id: str({ max: 64 }), confirm: optional(str({ max: 8 })) }),
    bodyRequired: true,
    responses: { 200: { description: 'The confirmation page' }, 303: { description: 'Back to API keys' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const key = await restaurantKey(rt, m.restaurant._id, body.key_id);
      if (!key)
        throw pageNotFound('This API key does not exist, or it belongs to a restaurant you do not manage.');
      const revoked = () =>
        seeOther(`${sectionPath('api-keys', m.restaurant._id)}&revoked=${encodeURIComponent(key.name)}`);
      // Already revoked (a double click on the confirmation, the back button, another manager first):
      // what was asked is done, so the list says so, as a disconnection does, not "does not exist".
      if (key.revoked_at) return revoked();
      if (body.confirm !== 'yes')
        return page(
          confirmPage(m.shell, {
            section: 'api-keys',
            title: `Revoke “${key.name}”?`,
            warning: `Programs using this key stop working at once, and the webhook endpoints it owns are deleted. This cannot be undone.`,
            action: `${BASE}/revoke`,
            fields: { restaurant_id: m.restaurant._id, key_id: key._id },
            button: 'Revoke the key',
            cancel: sectionPath('api-keys', m.restaurant._id),
          }),
        );
      const out = await revokeApiKey(rt, key._id, 'revoked from the dashboard', m.meta);
      await rt.settle(out.position);
      return revoked();
    },
  }),
];
