// Every read model the service keeps. Add a projection here and it is built, replayed and rebuilt
// like the others.
import type { Projection } from '../src/projection/projection';
import { missedCallAnalyticsProjection } from './analytics/missed-call-projection';
import { analyticsProjection, analyticsProjectionV1, analyticsProjectionV2 } from './analytics/projection';
import { webhookAnalyticsProjection, webhookAnalyticsProjectionV1 } from './analytics/webhook-projection';
import { apiKeysProjection, apiKeysProjectionV1, apiKeysProjectionV2 } from './api-keys';
import { bookingsProjection } from './bookings';
import { catalogProjection, catalogProjectionV2 } from './catalog';
import { customerImportsProjection } from './customer-imports';
import { customersProjection } from './customers';
import { missedCallsProjection, missedCallsProjectionV1 } from './missed-calls';
import { oauthApplicationsProjection } from './oauth-applications';
import { reservationDaysProjection } from './reservation-days';
import { reservationsProjection, reservationsProjectionV1 } from './reservations';
import { restaurantsProjection } from './restaurants';
import { seatingSyncProjection } from './seating-sync';
import { seatingSyncProjectionV2 } from './seating-sync-v2';
import { seatingSyncProjectionV3 } from './seating-sync-v3';
import {
  webhookDeliveriesProjection,
  webhookDeliveriesProjectionV1,
  webhookDeliveriesProjectionV2,
} from './webhook-deliveries';
import { webhookEndpointsProjection, webhookEndpointsProjectionV1 } from './webhook-endpoints';

export function allProjections(): Projection[] {
  return [
    restaurantsProjection,
    apiKeysProjection,
    customersProjection,
    catalogProjectionV2,
    bookingsProjection,
    reservationsProjection,
    reservationDaysProjection,
    seatingSyncProjectionV3,
    oauthApplicationsProjection,
    webhookEndpointsProjection,
    webhookDeliveriesProjection,
    missedCallsProjection,
    analyticsProjection,
    webhookAnalyticsProjection,
    missedCallAnalyticsProjection,
    customerImportsProjection,
  ];
}

/**
 * Versions a store built earlier may still serve (src/projection/versions.ts rebuilds the newer one
 * beside them and switches): what a running service lists besides allProjections(). Code that replays
 * into a fresh store (audit, benches, tests) uses allProjections(), the newest versions only.
 */
export function supersededProjections(): Projection[] {
  return [
    seatingSyncProjection,
    seatingSyncProjectionV2,
    catalogProjection,
    reservationsProjectionV1,
    webhookDeliveriesProjectionV1,
    webhookDeliveriesProjectionV2,
    webhookEndpointsProjectionV1,
    webhookAnalyticsProjectionV1,
    missedCallsProjectionV1,
    apiKeysProjectionV1,
    apiKeysProjectionV2,
    analyticsProjectionV1,
    analyticsProjectionV2,
  ];
}

/** Every version the service runs (src/runtime.ts). */
export function allProjectionVersions(): Projection[] {
  return [...allProjections(), ...supersededProjections()];
}
