// Who may use a dashboard page or action: a signed-in user who manages integrations for the restaurant
// named (the query's `restaurant`, a form's `restaurant_id`). A restaurant the user does not manage
// answers the 404 page, as does any object (endpoint, delivery, key, import) of another restaurant:
// editing an id in a URL or a form never reaches someone else's data.
import type { Context } from 'koa';
import type { RestaurantDoc } from '../../projections/restaurants';
import type { CommandMeta } from '../core/command-meta';
import type { RouteResult } from '../http/route';
import type { Runtime } from '../runtime';
import { csrfValid } from './csrf';
import { managedRestaurantDocs } from './eligibility';
import type { ShellContext } from './pages/dashboard-shell';
import { messagePage } from './pages/oauth-pages';
import { notYours, page, type SignedIn, seeOther, signedIn } from './respond';

export interface Manager extends SignedIn {
  restaurant: RestaurantDoc;
  shell: ShellContext;
  /** The manager as the actor of every command (an auditor sees who did what). */
  meta: CommandMeta;
}

const noRestaurant = (me: SignedIn) =>
  page(
    messagePage({
      title: 'No restaurant',
      message:
        'You do not manage integrations for any restaurant yet. Ask the restaurant’s owner or Couvert support.',
      account: me.account,
    }),
  );

async function resolve(
  rt: Runtime,
  me: SignedIn,
  restaurantId: string | undefined,
  requestId: string,
): Promise<Manager | RouteResult> {
  const managed = await managedRestaurantDocs(rt, me.user);
  if (!managed.length) return noRestaurant(me);
  const restaurant = restaurantId === undefined ? managed[0] : managed.find((r) => r._id === restaurantId);
  if (!restaurant) throw notYours();
  return {
    ...me,
    restaurant,
    shell: {
      restaurants: managed.map((r) => ({ id: r._id, name: r.name })),
      restaurant: { id: restaurant._id, name: restaurant.name, timezone: restaurant.timezone },
      account: me.account,
    },
    meta: { actor: `user:${me.user.user_id}`, request_id: requestId, restaurant_id: restaurant._id },
  };
}

/** For a page (GET): the manager, or the sign-in redirect / "no restaurant" page to answer instead. */
export async function managerForPage(
  rt: Runtime,
  ctx: Context,
  restaurantId: string | undefined,
  requestId: string,
): Promise<Manager | RouteResult> {
  const me = await signedIn(rt, ctx);
  if (!me) return seeOther(`/sign-in?next=${encodeURIComponent(ctx.originalUrl.slice(0, 2000))}`);
  return resolve(rt, me, restaurantId, requestId);
}

/** For an action (POST): the CSRF token first (a forged form changes nothing), then the restaurant. */
export async function managerForAction(
  rt: Runtime,
  ctx: Context,
  body: { csrf_token?: unknown; restaurant_id?: unknown },
  requestId: string,
): Promise<Manager | RouteResult> {
  const me = await signedIn(rt, ctx);
  if (!me) return seeOther('/sign-in?next=%2Fdashboard');
  if (!csrfValid(me.session, body.csrf_token))
    return page(
      messagePage({
        title: 'This form has expired',
        message: 'Nothing was changed. Go back, reload the page and try again.',
        account: me.account,
        back: { href: '/dashboard', label: 'Back to the dashboard' },
      }),
      {},
      403,
    );
  const id = typeof body.restaurant_id === 'string' ? body.restaurant_id : '';
  return resolve(rt, me, id, requestId);
}

export const isManager = (m: Manager | RouteResult): m is Manager => 'shell' in m;
