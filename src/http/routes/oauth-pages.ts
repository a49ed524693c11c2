// GET /oauth/authorize and the consent flow's forms (spec §4 "OAuth endpoints" 1, DESIGN §3 "OAuth
// pages"). Stateless between steps: each form carries the original authorization query string, which is
// checked again in full on every step (the application may have been disabled, a scope withdrawn), and
// the session's CSRF token.
import type { Context } from 'koa';
import { loadApplication } from '../../../commands/oauth/application-handler';
import { type ApplicationState, CLIENT_ID_PATTERN } from '../../../commands/oauth/applications';
import {
  type AuthorizationRequest,
  checkAuthorizeRequest,
  type RawQuery,
  redirectTo,
} from '../../../commands/oauth/authorize-request';
import { issueCode } from '../../../commands/oauth/token-handler';
import type { RestaurantDoc } from '../../../projections/restaurants';
import type { Runtime } from '../../runtime';
import { csrfValid } from '../../web/csrf';
import { eligibleRestaurants } from '../../web/eligibility';
import { originOf } from '../../web/headers';
import {
  type AppView,
  choicePage,
  consentPage,
  messagePage,
  noRestaurantPage,
  signInPage,
} from '../../web/pages/oauth-pages';
import {
  AUTHORIZATION_MAX_LENGTH,
  page,
  renderPageError,
  type SignedIn,
  seeOther,
  signedIn,
} from '../../web/respond';
import { ensureSession } from '../../web/sessions';
import { errorDescription } from '../oauth-errors';
import { malformedEscapes } from '../percent-escapes';
import { type AnyRoute, defineRoute, PUBLIC, type RouteResult } from '../route';
import { enums, obj, optional, str } from '../schema';
import { AUTHORIZE_PATH } from './oauth';

const appView = (app: ApplicationState): AppView => ({
  name: app.profile?.name ?? '',
  logo_url: app.profile?.logo_url ?? null,
  published_by_operator: app.profile?.published_by_operator ?? false,
});
const view = (r: RestaurantDoc) => ({ id: r._id, name: r.name, slug: r.slug });

function queryOf(qs: string): RawQuery {
  const out: RawQuery = {};
  for (const [k, v] of new URLSearchParams(qs)) {
    const had = out[k];
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

/** The parameters whose name or value holds a %-escape that is malformed or not UTF-8 (`state=%E9`). */
function notTextIn(qs: string): string[] {
  return malformedEscapes(qs).map(({ raw }) => {
    const [name = ''] = new URLSearchParams(raw).keys();
    return name;
  });
}

type Checked =
  | { done: RouteResult }
  | { done?: undefined; app: ApplicationState; request: AuthorizationRequest; query: string };

/** The full check of an authorization request: a page, a redirect with an error, or the request. */
async function check(rt: Runtime, qs: string): Promise<Checked> {
  const q = queryOf(qs);
  const clientId =
    typeof q.client_id === 'string' && CLIENT_ID_PATTERN.test(q.client_id) ? q.client_id : null;
  const app = clientId ? await loadApplication(rt, clientId) : null;
  const outcome = checkAuthorizeRequest(q, app, notTextIn(qs));
  if (outcome.kind === 'show')
    return {
      done: page(messagePage({ title: 'This connection cannot be made', message: outcome.message }), {}, 400),
    };
  if (outcome.kind === 'redirect')
    return {
      done: seeOther(
        redirectTo(
          outcome.redirect_uri,
          {
            error: outcome.error,
            error_description: errorDescription(outcome.description),
            state: outcome.state,
          },
          rt.config.baseUrl,
        ),
      ),
    };
  return { app: app as ApplicationState, request: outcome.request, query: qs };
}

const policyFor = (app: ApplicationState, request: AuthorizationRequest) => ({
  formTargets: [originOf(request.redirect_uri)].filter((o): o is string => o !== null),
  imageOrigins: [originOf(app.profile?.logo_url)].filter((o): o is string => o !== null),
});

/** The next step for a checked request: sign-in, restaurant choice or consent. */
async function step(
  rt: Runtime,
  ctx: Context,
  c: Exclude<Checked, { done: RouteResult }>,
  chosen: { restaurant_id: string | null; choose: boolean },
): Promise<RouteResult> {
  const policy = policyFor(c.app, c.request);
  const me = await signedIn(rt, ctx);
  if (!me) {
    const session = await ensureSession(rt, ctx);
    return page(
      signInPage({ csrf: session.doc.csrf, next: `${AUTHORIZE_PATH}?${c.query}`, app: appView(c.app) }),
      policy,
    );
  }
  const eligible = await eligibleRestaurants(rt, me.user, c.app);
  const base = { csrf: me.account.csrf, query: c.query, app: appView(c.app), account: me.account };
  if (!eligible.length) return page(noRestaurantPage(base), policy);
  const picked = chosen.restaurant_id ? eligible.find((r) => r._id === chosen.restaurant_id) : undefined;
  if (picked || (eligible.length === 1 && !chosen.choose))
    return page(
      consentPage({
        ...base,
        restaurant: view(picked ?? (eligible[0] as RestaurantDoc)),
        request: c.request,
        canChange: eligible.length > 1,
      }),
      policy,
    );
  const hint = c.request.restaurant_hint;
  const hinted = hint ? eligible.find((r) => r._id === hint || r.slug === hint) : undefined;
  const note =
    chosen.restaurant_id && !picked
      ? 'That restaurant cannot be connected to this application; choose one of these.'
      : hint && !hinted
        ? `${c.app.profile?.name} suggested a restaurant you cannot connect it to; choose one of these.`
        : null;
  return page(
    choicePage({ ...base, restaurants: eligible.map(view), selected: hinted?._id ?? null, note }),
    policy,
  );
}

/**
 * A form whose CSRF token or session does not hold (a session expired while the page stayed open, a
 * forged post): nothing happens. The request itself passed its checks, so the page offers to start it
 * again (a link: sign-in if needed, then the choice and consent once more), rather than leave the person
 * with no way back to the application.
 */
const expired = (me: SignedIn | null, query: string) =>
  page(
    messagePage({
      title: 'This form has expired',
      message: 'For your security this form can no longer be sent. Nothing was allowed or denied.',
      account: me?.account ?? null,
      back: { href: `${AUTHORIZE_PATH}?${query}`, label: me ? 'Start again' : 'Sign in and start again' },
    }),
    {},
    403,
  );

const formFields = {
  csrf_token: str({ max: 200, description: 'The session CSRF token' }),
  authorization: str({
    max: AUTHORIZATION_MAX_LENGTH,
    description: 'The authorization request (query string of GET /oauth/authorize)',
  }),
};

export const oauthPageRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: AUTHORIZE_PATH,
    absolute: true,
    hidden: true,
    openQuery: true,
    operationId: 'oauthAuthorize',
    summary: 'Start connecting an application (browser): sign-in, restaurant choice, consent',
    tag: 'OAuth',
    access: PUBLIC,
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'Back to the application' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx }) => {
      const c = await check(rt, ctx.querystring);
      if (c.done) return c.done;
      return step(rt, ctx, c, { restaurant_id: null, choose: false });
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${AUTHORIZE_PATH}/restaurant`,
    absolute: true,
    hidden: true,
    operationId: 'oauthChooseRestaurant',
    summary: 'The restaurant choice form (or "choose another restaurant")',
    tag: 'OAuth',
    access: PUBLIC,
    body: obj({ ...formFields, restaurant_id: optional(str({ max: 64 })) }),
    bodyRequired: true,
    responses: { 200: { description: 'The consent or choice page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body }) => {
      const c = await check(rt, body.authorization);
      if (c.done) return c.done;
      const me = await signedIn(rt, ctx);
      if (!me || !csrfValid(me.session, body.csrf_token)) return expired(me, c.query);
      return step(rt, ctx, c, { restaurant_id: body.restaurant_id ?? null, choose: true });
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${AUTHORIZE_PATH}/decision`,
    absolute: true,
    hidden: true,
    operationId: 'oauthDecide',
    summary: 'The consent form: allow (a code goes back to the application) or deny',
    tag: 'OAuth',
    access: PUBLIC,
    body: obj({
      ...formFields,
      restaurant_id: optional(str({ max: 64 })),
      decision: enums(['allow', 'deny']),
    }),
    bodyRequired: true,
    responses: { 303: { description: 'Back to the application' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const c = await check(rt, body.authorization);
      if (c.done) return c.done;
      const me = await signedIn(rt, ctx);
      if (!me || !csrfValid(me.session, body.csrf_token)) return expired(me, c.query);
      const back = (params: Record<string, string | null>) =>
        seeOther(
          redirectTo(c.request.redirect_uri, { ...params, state: c.request.state }, rt.config.baseUrl),
        );
      if (body.decision === 'deny')
        return back({
          error: 'access_denied',
          error_description: 'The restaurant manager denied the request',
        });
      const eligible = await eligibleRestaurants(rt, me.user, c.app);
      const restaurant = eligible.find((r) => r._id === body.restaurant_id);
      if (!restaurant) return step(rt, ctx, c, { restaurant_id: body.restaurant_id ?? null, choose: true });
      const issued = await issueCode(rt, c.request, restaurant._id, me.user.user_id, {
        actor: `user:${me.user.user_id}`,
        request_id: requestId,
      });
      await rt.settle(issued.position);
      return back({ code: issued.code });
    },
  }),
];
