// Where the write side gets a restaurant's custom field definitions: the catalog's write side (its
// event stream), never a read model, because they decide whether a value is accepted.
import type { WriteDeps } from '../../src/core/write-deps';
import { loadCatalog } from '../catalog/handler';
import type { CustomFieldDefinition } from './custom-fields';

export async function loadCustomFieldDefinitions(
  deps: WriteDeps,
  restaurantId: string,
): Promise<readonly CustomFieldDefinition[]> {
  return (await loadCatalog(deps, restaurantId)).customer_fields;
}
