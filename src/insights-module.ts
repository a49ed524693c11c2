// The Insights module: a month of past activity for the demo restaurant (src/insights-demo.ts), so
// the dashboard's Insights page has something to show on a fresh `npm start`. The page itself is
// src/http/routes/dashboard-insights.ts; the analytics projections are in projections/analytics/.
import { loadRestaurant } from '../commands/restaurants/handler';
import { registerDemoSeeder } from './demo';
import { seedInsightsDemo } from './insights-demo';

export const DEMO_INSIGHT_DAYS = 30;
export const DEMO_ENDPOINTS = ['we_demo_pos', 'we_demo_crm'];

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
}
