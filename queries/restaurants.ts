import { RESTAURANTS, type RestaurantDoc } from '../projections/restaurants';
import { notFound } from '../src/core/errors';
import type { DocumentStore } from '../src/ports/document-store';

export const findRestaurant = (docs: DocumentStore, id: string) =>
  docs.collection<RestaurantDoc>(RESTAURANTS).findOne({ _id: id });

export async function getRestaurant(docs: DocumentStore, id: string): Promise<RestaurantDoc> {
  const r = await findRestaurant(docs, id);
  if (!r) throw notFound(`restaurant ${id}`);
  return r;
}

export const listRestaurants = (docs: DocumentStore) =>
  docs.collection<RestaurantDoc>(RESTAURANTS).find({}, { sort: { _id: 1 } });
