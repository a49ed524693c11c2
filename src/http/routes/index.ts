// Every HTTP route of the service. A route exists only if it is listed here, and then it is served,
// enforced and documented in openapi.json.
import type { Runtime } from '../../runtime';
import type { AnyRoute } from '../route';
import { availabilityRoutes } from './availability';
import { catalogRoutes } from './catalog';
import { customerRoutes } from './customers';
import { dashboardRoutes } from './dashboard';
import { dashboardApiKeyRoutes } from './dashboard-api-keys';
import { dashboardImportRoutes } from './dashboard-import';
import { dashboardInsightsRoutes } from './dashboard-insights';
import { dashboardWebhookRoutes } from './dashboard-webhooks';
import { metaRoutes, testClockRoute } from './meta';
import { missedCallRoutes } from './missed-calls';
import { oauthRoutes } from './oauth';
import { oauthPageRoutes } from './oauth-pages';
import { referenceRoutes } from './reference';
import { reservationHistoryRoutes } from './reservation-history';
import { reservationRoutes } from './reservations';
import { webAssetRoutes } from './web-assets';
import { webSessionRoutes } from './web-session';
import { webhookRoutes } from './webhooks';

export function partnerRoutes(): AnyRoute[] {
  const list: AnyRoute[] = [];
  list.push(
    ...metaRoutes(() => list),
    ...catalogRoutes,
    ...availabilityRoutes,
    ...customerRoutes,
    ...reservationRoutes,
    ...reservationHistoryRoutes,
    ...webhookRoutes,
    ...missedCallRoutes,
    ...referenceRoutes,
    ...oauthRoutes,
    ...oauthPageRoutes,
    ...webSessionRoutes,
    ...dashboardRoutes,
    ...dashboardApiKeyRoutes,
    ...dashboardWebhookRoutes,
    ...dashboardImportRoutes,
    ...dashboardInsightsRoutes,
    ...webAssetRoutes,
  );
  return list;
}

export function allRoutes(rt: Runtime): AnyRoute[] {
  // A process without the api role (projector, scheduler) serves only its health check.
  if (!rt.config.roles.has('api')) return partnerRoutes().filter((r) => r.operationId === 'getHealth');
  const routes = partnerRoutes();
  if (rt.config.testClock) routes.push(testClockRoute);
  return routes;
}
