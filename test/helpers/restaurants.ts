import type { RestaurantProfile } from '../../commands/restaurants/events';

/** A valid restaurant profile for tests that create restaurants through the write side. */
export const restaurantProfile = (
  slug: string,
  overrides: Partial<RestaurantProfile> = {},
): RestaurantProfile => ({
  name: slug,
  slug,
  country_code: 'FR',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  api_option: true,
  customer_matching: true,
  features: [],
  ...overrides,
});
