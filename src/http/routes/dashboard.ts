// The restaurant dashboard (DESIGN §3): for a signed-in user who manages integrations. Its first page is
// Connected applications (spec §5 "Disconnection by the restaurant"); issue 15 adds the others here.

import { disconnectApplication } from '../../../commands/oauth/token-handler';
import { findApplication, listConnections } from '../../../queries/oauth';
import { originOf } from '../../web/headers';
import { isManager, managerForAction, managerForPage } from '../../web/manager';
import { connectionsPage } from '../../web/pages/dashboard-pages';
import { confirmPage, sectionPath } from '../../web/pages/dashboard-shell';
import { page, pageNotFound, renderPageError, seeOther } from '../../web/respond';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { obj, optional, str } from '../schema';

export const DASHBOARD_PATH = '/dashboard';

export const dashboardRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: DASHBOARD_PATH,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardConnections',
    summary: 'Connected applications of a restaurant the signed-in user manages',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj(
      { restaurant: optional(str({ max: 64 })), disconnected: optional(str({ max: 64 })) },
      { open: true },
    ),
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
      confirm: optional(str({ max: 8 })),
    }),
    bodyRequired: true,
    responses: {
      200: { description: 'The confirmation page' },
      303: { description: 'Back to Connected applications' },
    },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      // The CSRF token, then the restaurant (one the manager does not manage answers the 404 page).
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const r = m.restaurant._id;
      const back = () =>
        seeOther(`${DASHBOARD_PATH}?${new URLSearchParams({ restaurant: r, disconnected: body.client_id })}`);
      if (body.confirm !== 'yes') {
        // Asked first, as every action that cannot be undone: a misclick does not cut a restaurant's POS off.
        const connection = (await listConnections(rt.docs, r)).find((c) => c.client_id === body.client_id);
        if (!connection) throw pageNotFound(`This application is not connected to ${m.restaurant.name}.`);
        return page(
          confirmPage(m.shell, {
            section: 'applications',
            title: `Disconnect ${connection.name}?`,
            warning: `${connection.name} loses access to ${m.restaurant.name} at once: its ${connection.active_tokens} active token${connection.active_tokens === 1 ? ' is' : 's are'} revoked and the webhook endpoints it added are deleted. It can be connected again later, from the application.`,
            action: `${DASHBOARD_PATH}/applications/disconnect`,
            fields: { restaurant_id: r, client_id: body.client_id },
            button: `Disconnect ${connection.name}`,
            cancel: sectionPath('applications', r),
          }),
        );
      }
      // Confirmed (twice, from a double click: the second finds nothing to revoke and changes nothing).
      const out = await disconnectApplication(rt, r, body.client_id, m.meta);
      await rt.settle(out.position);
      return back();
    },
  }),
];
