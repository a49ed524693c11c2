// A restaurant's customer imports, newest first (the dashboard's import page).
import { CUSTOMER_IMPORTS, type CustomerImportDoc } from '../projections/customer-imports';
import type { DocumentStore } from '../src/ports/document-store';

export const IMPORT_HISTORY_LIMIT = 20;

export const listCustomerImports = (
  docs: DocumentStore,
  restaurantId: string,
  limit = IMPORT_HISTORY_LIMIT,
) =>
  docs
    .collection<CustomerImportDoc>(CUSTOMER_IMPORTS)
    .find({ restaurant_id: restaurantId }, { sort: { started_at: -1, _id: -1 }, limit });

export const countCustomerImports = (docs: DocumentStore, restaurantId: string) =>
  docs.collection<CustomerImportDoc>(CUSTOMER_IMPORTS).count({ restaurant_id: restaurantId });
