// Which restaurants a signed-in user may connect an application to: those where the user manages
// integrations, not suspended, and — for a third-party application — with the API option on (spec §5).
import { apiOptionAllows } from '../../commands/oauth/api-option';
import type { ApplicationState } from '../../commands/oauth/applications';
import { managedRestaurants, type UserState } from '../../commands/oauth/users';
import type { RestaurantDoc } from '../../projections/restaurants';
import { findRestaurant } from '../../queries/restaurants';
import type { Runtime } from '../runtime';

export async function managedRestaurantDocs(rt: Runtime, user: UserState): Promise<RestaurantDoc[]> {
  const docs: RestaurantDoc[] = [];
  for (const id of managedRestaurants(user)) {
    const r = await findRestaurant(rt.docs, id);
    if (r) docs.push(r);
  }
  return docs.sort((a, b) => a.name.localeCompare(b.name) || a._id.localeCompare(b._id));
}

export const allowsApplication = (r: RestaurantDoc, app: ApplicationState) =>
  !r.suspended && apiOptionAllows(r, app.profile);

export async function eligibleRestaurants(rt: Runtime, user: UserState, app: ApplicationState) {
  return (await managedRestaurantDocs(rt, user)).filter((r) => allowsApplication(r, app));
}
