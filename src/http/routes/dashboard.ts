// The restaurant dashboard (DESIGN §3): for a signed-in user who manages integrations. Its first page is
// Connected applications (spec §5 "Disconnection by the restaurant"); issue 15 adds the others here.

import { disconnectApplication } from '../../../commands/oauth/token-handler';
import { findApplication, listConnections } from '../../../queries/oauth';
import { csrfValid } from '../../web/csrf';
import { originOf } from '../../web/headers';
import { isManager, managerForPage } from '../../web/manager';
import { connectionsPage } from '../../web/pages/dashboard-pages';
import { messagePage } from '../../web/pages/oauth-pages';
import { page, renderPageError, seeOther, signedIn } from '../../web/respond';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { obj, optional, str } from '../schema';

export const DASHBOARD_PATH = '/dashboard';

export const dashboardRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: DASHBOARD_PATH,
    absolute: true,
    hidden: true,
    operationId: 'dashboardConnections',
    summary: 'Connected applications of a restaurant the signed-in user manages',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj({ restaurant: optional(str({ max: 64 })), disconnected: optional(str({ max: 64 })) }),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query, requestId }) => {
      // Another restaurant named in the URL (or one that does not exist) answers the 404 page.
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const current = m.restaurant;
      const connections = await listConnections(rt.docs, current._id);
      // The notice names an application only when it is indeed not connected here: a link cannot make
      // the page say a connected application is disconnected.
      const gone =
        query.disconnected && !connections.some((c) => c.client_id === query.disconnected)
          ? await findApplication(rt.docs, query.disconnected)
          : null;
      return page(
        connectionsPage({
          ...m.shell,
          connections,
          notice: gone ? `${gone.name} is disconnected: its access is revoked.` : null,
        }),
        {
          imageOrigins: [
            ...new Set(connections.map((c) => originOf(c.logo_url)).filter((o): o is string => o !== null)),
          ],
        },
      );
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${DASHBOARD_PATH}/applications/disconnect`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardDisconnect',
    summary: 'Disconnect an application from a restaurant: every active token of it there is revoked',
    tag: 'OAuth',
    access: PUBLIC,
    body: obj({
      csrf_token: str({ max: 200 }),
      restaurant_id: str({ max: 64 }),
      client_id: str({ max: 64 }),
    }),
    bodyRequired: true,
    responses: { 303: { description: 'Back to Connected applications' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const me = await signedIn(rt, ctx);
      if (!me) return seeOther(`/sign-in?next=${encodeURIComponent(DASHBOARD_PATH)}`);
      if (!csrfValid(me.session, body.csrf_token))
        return page(
          messagePage({
            title: 'This form has expired',
            message: 'Nothing was changed. Reload Connected applications and try again.',
            account: me.account,
          }),
          {},
          403,
        );
      if (!me.user.restaurants[body.restaurant_id])
        return page(
          messagePage({
            title: 'Not your restaurant',
            message: 'You do not manage integrations for this restaurant; nothing was changed.',
            account: me.account,
          }),
          {},
          403,
        );
      const out = await disconnectApplication(rt, body.restaurant_id, body.client_id, {
        actor: `user:${me.user.user_id}`,
        request_id: requestId,
      });
      await rt.settle(out.position);
      const q = new URLSearchParams({ restaurant: body.restaurant_id, disconnected: body.client_id });
      return seeOther(`${DASHBOARD_PATH}?${q}`);
    },
  }),
];
