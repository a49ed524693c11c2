// The embedded DocumentStore: in-process collections with MongoDB query semantics (mingo), for the
// single-process deployment. Nothing is persisted: read models are rebuilt from the event log at
// start. Lookups by _id, by unique keys and by equality on an index's leading fields go through
// Maps and never scan a collection.
import {
  type Collection,
  type Doc,
  DocumentStoreError,
  type DocumentStore as DocumentStorePort,
} from '../../ports/document-store';
import { EmbeddedCollection } from './embedded-collection';
import { validateCollectionName, validatePosition } from './validate';

export { EmbeddedCollection, type QueryPlan } from './embedded-collection';

export class EmbeddedDocumentStore implements DocumentStorePort {
  readonly kind = 'embedded' as const;
  private readonly collections = new Map<string, EmbeddedCollection>();
  private readonly checkpoints = new Map<string, bigint>();
  private closed = false;
  private readonly assertOpen = () => {
    if (this.closed) throw new DocumentStoreError('the document store is closed');
  };

  collection<T extends Doc = Doc>(name: string): EmbeddedCollection<T> & Collection<T> {
    let collection = this.collections.get(name);
    if (collection === undefined) {
      validateCollectionName(name);
      collection = new EmbeddedCollection(name, this.assertOpen);
      this.collections.set(name, collection);
    }
    return collection as unknown as EmbeddedCollection<T>;
  }

  /** Names of the collections created so far (audit verify compares each with the live store's). */
  collectionNames(): string[] {
    this.assertOpen();
    return [...this.collections.keys()].sort();
  }

  async getCheckpoint(projection: string): Promise<bigint | null> {
    this.assertOpen();
    return this.checkpoints.get(projection) ?? null;
  }

  async setCheckpoint(projection: string, position: bigint): Promise<void> {
    this.assertOpen();
    validatePosition(position);
    const current = this.checkpoints.get(projection);
    if (current === undefined || position > current) this.checkpoints.set(projection, position);
  }

  async getCheckpoints(projections: readonly string[]): Promise<Map<string, bigint | null>> {
    this.assertOpen();
    const out = new Map<string, bigint | null>();
    for (const name of projections) out.set(name, this.checkpoints.get(name) ?? null);
    return out;
  }

  async setCheckpoints(entries: readonly (readonly [string, bigint])[]): Promise<void> {
    this.assertOpen();
    for (const [, position] of entries) validatePosition(position);
    for (const [name, position] of entries) {
      const current = this.checkpoints.get(name);
      if (current === undefined || position > current) this.checkpoints.set(name, position);
    }
  }

  async dropAll(keep: readonly string[] = []): Promise<void> {
    this.assertOpen();
    // Handles already given out stay valid, as MongoDB collection handles do after a drop.
    for (const [name, collection] of this.collections) if (!keep.includes(name)) collection.reset();
    this.checkpoints.clear();
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    this.assertOpen();
    for (const name of names) this.collections.get(name)?.reset();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const collection of this.collections.values()) collection.reset();
    this.collections.clear();
    this.checkpoints.clear();
  }
}
