// `--restaurant rest_x` of the operator's commands: a restaurant the log holds, else 404 "restaurant
// rest_x not found" (exit 1). A list filtered on a mistyped id answered nothing, exit 0, which reads as
// "this restaurant has no keys" (keys list, webhooks endpoints, connections list).
import { loadRestaurant } from '../../commands/restaurants/handler';
import { notFound } from '../core/errors';
import { type CliContext, optionalFlag, requireFlag } from './registry';

async function known(ctx: CliContext, id: string): Promise<string> {
  if (!(await loadRestaurant(ctx.rt, id)).exists) throw notFound(`restaurant ${id}`);
  return id;
}

/** `--restaurant`, required, naming a restaurant that exists. */
export const restaurantFlag = (ctx: CliContext): Promise<string> =>
  known(ctx, requireFlag(ctx, 'restaurant'));

/** `--restaurant` when given (then a restaurant that exists), else undefined. */
export async function optionalRestaurantFlag(ctx: CliContext): Promise<string | undefined> {
  const id = optionalFlag(ctx, 'restaurant');
  return id === undefined ? undefined : known(ctx, id);
}
