import type { Projection } from '../src/projection/projection';

export interface RestaurantDoc {
  _id: string;
  name: string;
  slug: string;
  country_code: string;
  timezone: string;
  currency: string;
  api_option: boolean;
  customer_matching: boolean;
  features: string[];
  suspended: boolean;
  created_at: string;
  updated_at: string;
  [k: string]: unknown;
}

export const RESTAURANTS = 'restaurants';

/** $set of absolute values only: re-applying an event changes nothing. */
export const restaurantsProjection: Projection = {
  name: 'restaurants',
  eventTypes: ['RestaurantCreated', 'RestaurantUpdated', 'RestaurantSuspended', 'RestaurantResumed'],
  async setup(docs) {
    await docs.collection(RESTAURANTS).createIndex({ keys: { slug: 1 }, unique: true, name: 'slug_unique' });
  },
  async apply(event, docs) {
    const d = event.data as Record<string, unknown>;
    const id = d.restaurant_id as string;
    const col = docs.collection<RestaurantDoc>(RESTAURANTS);
    switch (event.type) {
      case 'RestaurantCreated': {
        const { restaurant_id: _r, at, ...profile } = d;
        await col.updateOne(
          { _id: id },
          { $set: { ...profile, suspended: false, updated_at: at }, $setOnInsert: { created_at: at } },
          { upsert: true },
        );
        return;
      }
      case 'RestaurantUpdated':
        await col.updateOne({ _id: id }, { $set: { ...(d.changes as object), updated_at: d.at } });
        return;
      case 'RestaurantSuspended':
        await col.updateOne({ _id: id }, { $set: { suspended: true, updated_at: d.at } });
        return;
      case 'RestaurantResumed':
        await col.updateOne({ _id: id }, { $set: { suspended: false, updated_at: d.at } });
        return;
    }
  },
};
