// Dashboard: the Insights page (GET only). The manager's restaurant, a period of the last 7, 30 or
// 90 local days ending today, and the analytics read models (queries/insights.ts) as charts.
import { localDateOf } from '../../../commands/availability/zone-time';
import { insightsOf } from '../../../queries/insights';
import { isManager, managerForPage } from '../../web/manager';
import { insightsPage, PERIODS, type Period } from '../../web/pages/insights-pages';
import { page, renderPageError } from '../../web/respond';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { enums, obj, optional, str } from '../schema';

/** The inclusive local dates of the last `period` days ending `today`. */
export function periodRange(today: string, period: number): { from: string; to: string } {
  const from = new Date(Date.parse(`${today}T00:00:00Z`) - (period - 1) * 86_400_000)
    .toISOString()
    .slice(0, 10);
  return { from, to: today };
}

export const dashboardInsightsRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/dashboard/insights',
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardInsights',
    summary:
      'Insights (charts of reservations, webhooks and missed calls) of a restaurant the signed-in user manages',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj(
      {
        restaurant: optional(str({ max: 64 })),
        period: optional(enums(PERIODS.map(String) as ['7', '30', '90'])),
      },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const period = Number(query.period ?? '30') as Period;
      const today = localDateOf(m.restaurant.timezone, rt.clock.now().getTime());
      const { from, to } = periodRange(today, period);
      const insights = await insightsOf(rt.docs, m.restaurant._id, from, to);
      return page(insightsPage(m.shell, { insights, period }));
    },
  }),
];
