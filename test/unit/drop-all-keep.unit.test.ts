// dropAll(keep) through the stores that rename collections, and MongoDB's drop of a collection
// already gone, without a server: fakes stand for the inner store and the driver's Db.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MongoDocumentStore } from '../../src/adapters/document-store/mongodb';
import type { DocumentStore } from '../../src/ports/document-store';
import { AliasedDocumentStore, scoped } from '../../src/projection/versions';

/** An inner store recording what dropAll was asked to keep. */
function recording() {
  const kept: (readonly string[] | undefined)[] = [];
  const docs = {
    kind: 'embedded',
    collection: () => ({}),
    dropAll: async (keep?: readonly string[]) => {
      kept.push(keep);
    },
  } as unknown as DocumentStore;
  return { docs, kept };
}

test('AliasedDocumentStore.dropAll keeps the collection a kept logical name reads, and the name itself', async () => {
  const { docs, kept } = recording();
  const aliased = new AliasedDocumentStore(docs);
  aliased.setAliases({ sessions: 'sessions_v2' });
  await aliased.dropAll(['sessions', 'rate_limits']);
  await aliased.dropAll();
  assert.equal(kept, [['sessions', 'rate_limits', 'sessions_v2'], undefined]);
});

test("a version's renaming view keeps the physical collection of a kept logical name", async () => {
  const { docs, kept } = recording();
  let view: DocumentStore | null = null;
  const v2 = scoped({
    name: 'things',
    version: 2,
    collections: ['things'],
    eventTypes: ['T'],
    apply: async (_e, d) => {
      view = d;
    },
  });
  await v2.apply({} as never, docs);
  await (view as unknown as DocumentStore).dropAll(['things']);
  assert.equal(kept, [['things', 'things_v2']]);
});

test('MongoDB dropAll: a collection dropped meanwhile (NamespaceNotFound, code 26) is not an error', async () => {
  const dropped: string[] = [];
  const db = {
    listCollections: () => ({ toArray: async () => [{ name: 'a' }, { name: 'gone' }, { name: 'kept' }] }),
    dropCollection: async (name: string) => {
      if (name === 'gone')
        throw Object.assign(new Error('ns not found'), { code: 26, codeName: 'NamespaceNotFound' });
      dropped.push(name);
      return true;
    },
  };
  const Store = MongoDocumentStore as unknown as new (client: unknown, db: unknown) => MongoDocumentStore;
  const store = new Store({}, db);
  await store.dropAll(['kept']);
  assert.equal(dropped, ['a']);
  // Any other failure still fails.
  db.dropCollection = async () => {
    throw Object.assign(new Error('not authorized'), { code: 13 });
  };
  let failed = false;
  await store.dropAll(['kept']).catch(() => {
    failed = true;
  });
  assert.ok(failed);
});

test('MongoDB dropCollections: one drop each (not a delete per document), one already gone is no error', async () => {
  const dropped: string[] = [];
  const db = {
    collection: () => {
      throw new Error('no document is deleted one by one');
    },
    dropCollection: async (name: string) => {
      if (name === 'gone')
        throw Object.assign(new Error('ns not found'), { code: 26, codeName: 'NamespaceNotFound' });
      dropped.push(name);
      return true;
    },
  };
  const Store = MongoDocumentStore as unknown as new (client: unknown, db: unknown) => MongoDocumentStore;
  await new Store({}, db).dropCollections(['tally', 'gone', 'tally_days']);
  assert.equal(dropped, ['tally', 'tally_days']);
});

test('AliasedDocumentStore.dropCollections drops the collections the names read', async () => {
  const asked: (readonly string[])[] = [];
  const docs = {
    kind: 'mongodb',
    dropCollections: async (names: readonly string[]) => {
      asked.push(names);
    },
  } as unknown as DocumentStore;
  const aliased = new AliasedDocumentStore(docs);
  aliased.setAliases({ tally: 'tally_v2' });
  await aliased.dropCollections(['tally', 'other']);
  assert.equal(asked, [['tally_v2', 'other']]);
});

test.run();
