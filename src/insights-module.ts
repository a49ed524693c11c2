// The Insights module: a month of past activity for the demo restaurant (src/insights-demo.ts), so
// the dashboard's Insights page has something to show on a fresh `npm start`. The page itself is
// src/http/routes/dashboard-insights.ts; the analytics projections are in projections/analytics/.
import { loadRestaurant } from '../commands/restaurants/handler';
import { createWebhookEndpoint } from '../commands/webhook-endpoints/handler';
import { operatorMeta } from './core/command-meta';
import { ApiError } from './core/errors';
import { registerDemoKeySeeder, registerDemoSeeder } from './demo';
import { seedInsightsDemo } from './insights-demo';

export const DEMO_INSIGHT_DAYS = 30;
/**
 * The endpoints the demo month's deliveries went to, made for the demo key so the dashboard shows
 * them with their history: disabled (nothing is sent to them), at addresses of example.com, which
 * IANA keeps for documentation.
 */
const DEMO_ENDPOINT_SETTINGS = [
  { id: 'we_demo_pos', url: 'https://pos.example.com/couvert/webhooks', description: 'Demo point of sale' },
  { id: 'we_demo_crm', url: 'https://crm.example.com/hooks/couvert', description: 'Demo CRM' },
];
export const DEMO_ENDPOINTS = DEMO_ENDPOINT_SETTINGS.map((e) => e.id);

export function registerInsightsModule(): void {
  registerDemoSeeder(async (rt, restaurantId) => {
    const restaurant = await loadRestaurant(rt, restaurantId);
    const timezone = restaurant.profile?.timezone ?? 'Europe/Paris';
    return seedInsightsDemo(rt, restaurantId, {
      days: DEMO_INSIGHT_DAYS,
      timezone,
      endpoints: DEMO_ENDPOINTS,
    });
  });
  registerDemoKeySeeder(async (rt, restaurantId, key) => {
    let position: bigint | null = null;
    for (const e of DEMO_ENDPOINT_SETTINGS) {
      try {
        const made = await createWebhookEndpoint(
          rt,
          {
            restaurantId,
            url: e.url,
            description: e.description,
            disabled: true,
            endpointId: e.id,
            credential: { id: key.id, scopes: key.scopes },
          },
          operatorMeta('demo'),
        );
        position = made.position ?? position;
      } catch (err) {
        // The same endpoint made again answers nothing new; this is one deleted (or changed) since,
        // by an operator, before an earlier start could record that the seeders ran: left as it is.
        if (!(err instanceof ApiError && err.status === 409)) throw err;
      }
    }
    return position;
  });
}
