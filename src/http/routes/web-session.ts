// Sign-in and sign-out, shared by the consent pages and the dashboard. Sign-in attempts are limited per
// IP and per account; a success always starts a new session (no session fixation).
import { loadApplication } from '../../../commands/oauth/application-handler';
import { CLIENT_ID_PATTERN } from '../../../commands/oauth/applications';
import { burnPasswordCheck, verifyPassword } from '../../../commands/oauth/passwords';
import { loadUser } from '../../../commands/oauth/user-handler';
import { normaliseEmail } from '../../../commands/oauth/users';
import type { Runtime } from '../../runtime';
import { csrfValid } from '../../web/csrf';
import { rememberDevice, trustedDevice } from '../../web/device-cookies';
import { originOf } from '../../web/headers';
import { type AppView, signInPage } from '../../web/pages/oauth-pages';
import { NEXT_MAX_LENGTH, page, renderPageError, safeNext, seeOther, signedIn } from '../../web/respond';
import { endSession, ensureSession, getSession, startSignedInSession } from '../../web/sessions';
import { signInLimits } from '../../web/sign-in-limits';
import { logSignInFailure, logSignInLocked, signInFailureReason } from '../../web/sign-in-log';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { obj, optional, str } from '../schema';

/** When signing in on the way to a consent page, the application is named. */
async function appFor(rt: Runtime, next: string): Promise<AppView | null> {
  if (!next.startsWith('/oauth/authorize?')) return null;
  const id = new URLSearchParams(next.slice(next.indexOf('?') + 1)).get('client_id');
  if (!id || !CLIENT_ID_PATTERN.test(id)) return null;
  const app = await loadApplication(rt, id);
  return app.profile && !app.disabled
    ? {
        name: app.profile.name,
        logo_url: app.profile.logo_url,
        published_by_operator: app.profile.published_by_operator,
      }
    : null;
}

const policyFor = (app: AppView | null) => ({
  imageOrigins: [originOf(app?.logo_url)].filter((o): o is string => o !== null),
});

export const webSessionRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/sign-in',
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; `next` is checked.
    openQuery: true,
    operationId: 'signInPage',
    summary: 'The sign-in page',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj({ next: optional(str({ max: NEXT_MAX_LENGTH })) }, { open: true }),
    responses: { 200: { description: 'An HTML page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query }) => {
      const next = safeNext(query.next);
      if (await signedIn(rt, ctx)) return seeOther(next);
      const session = await ensureSession(rt, ctx);
      const app = await appFor(rt, next);
      return page(signInPage({ csrf: session.doc.csrf, next, app }), policyFor(app));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sign-in',
    absolute: true,
    hidden: true,
    operationId: 'signIn',
    summary: 'Sign in (email and password)',
    tag: 'OAuth',
    access: PUBLIC,
    body: obj({
      csrf_token: str({ max: 200 }),
      next: optional(str({ max: NEXT_MAX_LENGTH })),
      email: str({ max: 320 }),
      password: str({ max: 1024 }),
    }),
    bodyRequired: true,
    responses: { 200: { description: 'The sign-in page again' }, 303: { description: 'Signed in' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body }) => {
      const next = safeNext(body.next);
      const app = await appFor(rt, next);
      const session = await getSession(rt, ctx);
      const again = async (error: string, status: number) => {
        const s = session ?? (await ensureSession(rt, ctx));
        return page(
          signInPage({ csrf: s.doc.csrf, next, app, error, email: body.email }),
          policyFor(app),
          status,
        );
      };
      if (!csrfValid(session, body.csrf_token))
        return again('This form had expired. Please sign in again.', 403);
      const account = normaliseEmail(body.email);
      const limits = signInLimits(rt);
      let loading: ReturnType<typeof loadUser> | undefined;
      const load = () => {
        loading ??= loadUser(rt, account);
        return loading;
      };
      const device = await trustedDevice(rt, ctx, account, async () => (await load()).password_hash);
      const hold = await limits.check(ctx.ip, account, device);
      if (hold !== null) {
        logSignInLocked(rt, ctx, account, device, hold);
        const wait = hold.seconds;
        return again(
          `Too many sign-in attempts. Try again in ${Math.ceil(wait / 60)} minute${wait > 60 ? 's' : ''}.`,
          429,
        );
      }
      const user = await load();
      const ok = user.password_hash
        ? await verifyPassword(body.password, user.password_hash)
        : await burnPasswordCheck(body.password);
      // A failure is already counted (limits.check): a success clears it (a device's, from a device).
      if (!ok || !user.user_id || !user.email) {
        logSignInFailure(rt, ctx, account, device, signInFailureReason(user, ok), user.user_id ?? null);
        return again('The email or password is incorrect.', 200);
      }
      await limits.succeeded(account, device);
      await startSignedInSession(rt, ctx, session, {
        user_id: user.user_id,
        email: user.email,
        password_hash: user.password_hash,
      });
      rememberDevice(rt, ctx, account, user.password_hash);
      return seeOther(next);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/sign-out',
    absolute: true,
    hidden: true,
    operationId: 'signOut',
    summary: 'Sign out',
    tag: 'OAuth',
    access: PUBLIC,
    body: obj({ csrf_token: str({ max: 200 }) }),
    bodyRequired: true,
    responses: { 303: { description: 'Signed out' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body }) => {
      const session = await getSession(rt, ctx);
      // Without the token nothing happens (a forged sign-out), but the person still lands on the sign-in page.
      if (csrfValid(session, body.csrf_token)) await endSession(rt, ctx, session);
      return seeOther('/sign-in');
    },
  }),
];
