// Where the write side gets a restaurant's custom field definitions. The catalog owns them (its
// stream, `GET /customer-fields`); customers only need "the definitions of this restaurant", read
// from the write side (never a read model) because they decide whether a value is accepted.
import type { WriteDeps } from '../../src/core/write-deps';
import type { CustomFieldDefinition } from './custom-fields';

export type CustomFieldDefinitionSource = (
  deps: WriteDeps,
  restaurantId: string,
) => Promise<readonly CustomFieldDefinition[]>;

// Until the catalog's write side answers, a restaurant defines no custom field: every id is unknown (422).
let source: CustomFieldDefinitionSource = async () => [];

/** The catalog module plugs its loader in here when it registers. */
export function setCustomFieldDefinitionSource(next: CustomFieldDefinitionSource): void {
  source = next;
}

export const loadCustomFieldDefinitions = (deps: WriteDeps, restaurantId: string) =>
  source(deps, restaurantId);
