// Restaurant lifecycle events (stream `restaurant-<id>`). Catalog configuration lives in its own
// stream (commands/catalog).

export interface RestaurantProfile {
  name: string;
  slug: string;
  country_code: string;
  timezone: string;
  currency: string;
  /** Third-party OAuth applications may connect only when the restaurant enabled the API option. */
  api_option: boolean;
  /** Automatic customer matching on inline reservation customers (spec §4 POST /reservations). */
  customer_matching: boolean;
  features: string[];
}

export type RestaurantEvent =
  | { type: 'RestaurantCreated'; data: { restaurant_id: string; at: string } & RestaurantProfile }
  | {
      type: 'RestaurantUpdated';
      data: { restaurant_id: string; at: string; changes: Partial<RestaurantProfile> };
    }
  | { type: 'RestaurantSuspended'; data: { restaurant_id: string; at: string; reason: string | null } }
  | { type: 'RestaurantResumed'; data: { restaurant_id: string; at: string } };

export const restaurantStream = (id: string) => `restaurant-${id}`;
export const slugClaimStream = (slug: string) => `restaurant-slug-${slug}`;
