// Scaled out, every MongoDB read goes to the primary whatever MONGODB_URL's readPreference says, as
// EventStoreDB reads go to the leader: a projection reads a document and writes what it computed
// from it (a lagging secondary's copy would overwrite the updates it has not replicated yet), a
// request settled by its checkpoints must then read documents at least that new, and the key store
// must see a key made or destroyed a moment ago (a new key read as missing, an erased customer's key
// as active). No server is needed: the driver resolves the preference when the Db is made.
import { MongoClient } from 'mongodb';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readModelsDb } from '../../src/adapters/document-store/mongodb';
import { CHECKPOINTS_COLLECTION } from '../../src/adapters/document-store/validate';
import { keysDb } from '../../src/adapters/key-store/mongodb';
import { mongoLimiterOptions, RATE_LIMITS_COLLECTION } from '../../src/http/rate-limit';

const test = suite('mongodb: reads on the primary');

/** What rate-limiter-flexible's Mongo store reads through: a Db as given, or a client's `db(dbName)`. */
function limiterDb(storeClient: unknown, dbName: string | undefined) {
  const c = storeClient as { db?: (name?: string) => unknown };
  return (typeof c.db === 'function' ? c.db(dbName) : c) as {
    collection(n: string): { readPreference?: { mode: string } };
    databaseName: string;
  };
}

for (const preference of ['secondaryPreferred', 'secondary', 'nearest']) {
  test(`readPreference=${preference} in the URL: read models and keys are still read on the primary`, async () => {
    // Nothing listens on port 1: the driver connects only on a first operation, which never comes.
    const client = new MongoClient(`mongodb://127.0.0.1:1/?readPreference=${preference}`);
    try {
      assert.is(client.db('x').readPreference?.mode, preference, 'the URL is read as given');
      const docs = readModelsDb(client, 'couvert');
      assert.is(docs.collection('reservations').readPreference?.mode, 'primary', 'read models');
      assert.is(docs.collection(CHECKPOINTS_COLLECTION).readPreference?.mode, 'primary', 'checkpoints');
      const keys = keysDb(client, 'couvert_keys');
      for (const name of ['subject_keys', 'key_pages', 'key_links'])
        assert.is(keys.collection(name).readPreference?.mode, 'primary', name);
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
