// The API key an action names, if it is one of the restaurant's own (any state): the pages check
// ownership here, then decide what a revoked key means for their form.
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import type { Runtime } from '../runtime';

export async function restaurantKey(
  rt: Runtime,
  restaurantId: string,
  id: string,
): Promise<ApiKeyDoc | null> {
  if (!id) return null;
  const key = await rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: id });
  return key && key.restaurant_id === restaurantId && key.type === 'API_KEY' ? key : null;
}
