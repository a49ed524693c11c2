// Scaled out, every MongoDB read goes to the primary whatever MONGODB_URL's readPreference says, as
// EventStoreDB reads go to the leader: a projection reads a document and writes what it computed
// from it (a lagging secondary's copy would overwrite the updates it has not replicated yet), a
// request settled by its checkpoints must then read documents at least that new, and the key store
// must see a key made or destroyed a moment ago (a new key read as missing, an erased customer's key
// as active). No server is needed: the driver resolves the preference when the Db is made, and the
// client handed to connect answers its ping and index without one.
import { type Db, MongoClient, type MongoClientOptions } from 'mongodb';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MongoDocumentStore } from '../../src/adapters/document-store/mongodb';
import { CHECKPOINTS_COLLECTION } from '../../src/adapters/document-store/validate';
import { MongoKeyStore } from '../../src/adapters/key-store/mongodb';
import { mongoLimiterOptions, RATE_LIMITS_COLLECTION } from '../../src/http/rate-limit';

const test = suite('mongodb: reads on the primary');

/** A real client (its Db resolves preferences as the driver does) whose server calls answer at once. */
function serverlessClient(made: Db[]) {
  return (url: string, options?: MongoClientOptions): MongoClient => {
    const client = new MongoClient(url, options);
    const db = client.db.bind(client);
    client.connect = async () => client;
    client.db = (name, dbOptions) => {
      const handed = db(name, dbOptions);
      made.push(handed);
      handed.command = async () => ({ ok: 1 });
      const collection = handed.collection.bind(handed);
      handed.collection = ((collectionName: string, collectionOptions?: object) => {
        const c = collection(collectionName, collectionOptions);
        c.createIndex = async () => 'stub';
        return c;
      }) as Db['collection'];
      return handed;
    };
    return client;
  };
}

for (const preference of ['secondaryPreferred', 'secondary', 'nearest']) {
  // Nothing listens on port 1: every call that would need a server is answered by the stand-in.
  const url = `mongodb://127.0.0.1:1/?readPreference=${preference}`;

  test(`readPreference=${preference} in the URL: the read models' store reads on the primary`, async () => {
    const made: Db[] = [];
    const store = await MongoDocumentStore.connect(url, 'couvert', undefined, serverlessClient(made));
    try {
      assert.is(store.client.db('x').readPreference?.mode, preference, 'the URL is read as given');
      const own = made.filter((db) => db.databaseName === 'couvert');
      assert.ok(own.length > 0, 'connect asked its client for the database');
      for (const db of own) {
        assert.is(db.collection('reservations').readPreference?.mode, 'primary', 'read models');
        assert.is(db.collection(CHECKPOINTS_COLLECTION).readPreference?.mode, 'primary', 'checkpoints');
      }
    } finally {
      await store.close();
    }
  });

  test(`readPreference=${preference} in the URL: the key store reads on the primary`, async () => {
    const made: Db[] = [];
    const store = await MongoKeyStore.connect(url, 'couvert_keys', undefined, serverlessClient(made));
    try {
      assert.ok(made.length > 0, 'connect asked its client for the database');
      for (const db of made) {
        assert.is(db.databaseName, 'couvert_keys');
        for (const name of ['subject_keys', 'key_pages', 'key_links'])
          assert.is(db.collection(name).readPreference?.mode, 'primary', name);
      }
    } finally {
      await store.close();
    }
  });
}

/** What rate-limiter-flexible's Mongo store reads through: a Db as given, or a client's `db(dbName)`. */
function limiterDb(storeClient: unknown, dbName: string | undefined) {
  const c = storeClient as { db?: (name?: string) => unknown };
  return (typeof c.db === 'function' ? c.db(dbName) : c) as {
    collection(n: string): { readPreference?: { mode: string } };
    databaseName: string;
  };
}

for (const preference of ['secondaryPreferred', 'secondary', 'nearest']) {
  test(`readPreference=${preference} in the URL: the rate limits' budgets are read on the primary`, async () => {
    // Nothing listens on port 1: the driver connects only on a first operation, which never comes.
    const client = new MongoClient(`mongodb://127.0.0.1:1/?readPreference=${preference}`);
    try {
      assert.is(client.db('x').readPreference?.mode, preference, 'the URL is read as given');
      // A budget read on a secondary behind the primary counts fewer points than were spent: the
      // limiter's `get` (sign-in's check) and its reads would let more through than the limit.
      const limits = mongoLimiterOptions(client, 'couvert', 'signin_ip', 5, 60);
      const db = limiterDb(limits.storeClient, limits.dbName);
      assert.is(db.databaseName, 'couvert', 'rate limits: the read models database');
      assert.is(db.collection(RATE_LIMITS_COLLECTION).readPreference?.mode, 'primary', 'rate limits');
    } finally {
      await client.close();
    }
  });
}

test.run();
