// The behaviour every DocumentStore adapter must show. Each test file registers it on its own suite:
//   documentStoreContract(test, { open: () => … }, options); test.run();
// Each test gets its own store from open() and may assume it starts empty.
import type { Test } from 'uvu';
import { fieldNameContract } from './document-store.field-names';
import {
  type DocumentStoreContractOptions,
  type DocumentStoreHarness,
  registrar,
} from './document-store.helpers';
import { indexContract } from './document-store.indexes';
import { queryContract } from './document-store.queries';
import { storeContract } from './document-store.store';
import { writeContract } from './document-store.writes';

export type { DocumentStoreContractOptions, DocumentStoreHarness } from './document-store.helpers';

export function documentStoreContract(
  test: Test,
  harness: DocumentStoreHarness,
  options: DocumentStoreContractOptions = {},
): void {
  const it = registrar(test, harness, options);
  queryContract(it);
  writeContract(it);
  indexContract(it, options.propertyRuns ?? 100);
  storeContract(it);
  fieldNameContract(it);
}
