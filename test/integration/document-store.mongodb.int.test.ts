// The document-store contract against a real MongoDB (mongo:7, single-node replica set) in a
// container. Without a container runtime the contract is registered as skipped (visibly), unless
// REQUIRE_DOCKER=1 makes that a failure. The error mapping needs no server and always runs.
import { MongoDBContainer, type StartedMongoDBContainer } from '@testcontainers/mongodb';
import fc from 'fast-check';
import { MongoInvalidArgumentError, MongoNetworkError, MongoServerError } from 'mongodb';
import { getContainerRuntimeClient } from 'testcontainers';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  MongoDocumentStore,
  positionToPadded,
  translateMongoError,
} from '../../src/adapters/document-store/mongodb';
import {
  DocumentRefusedError,
  DocumentStoreError,
  DuplicateKeyError,
  InvalidQueryError,
  isPermanentRefusal,
} from '../../src/ports/document-store';
import { documentStoreContract } from '../contracts/document-store.contract';
import { withTimeout } from '../contracts/document-store.helpers';

const IMAGE = process.env.MONGO_IMAGE ?? 'mongo:7';
const test = suite('document-store: mongodb');

async function runtimeProblem(): Promise<string | null> {
  try {
    await withTimeout(getContainerRuntimeClient(), 15_000, 'the container runtime');
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

const problem = await runtimeProblem();
let container: StartedMongoDBContainer | undefined;
let url = '';
let databases = 0;

if (problem && process.env.REQUIRE_DOCKER === '1') {
  test('a container runtime is available (REQUIRE_DOCKER=1)', () => {
    assert.unreachable(`no container runtime: ${problem}`);
  });
} else if (problem) {
  console.log(
    `SKIP mongodb document-store contract: no container runtime (${problem}); REQUIRE_DOCKER=1 makes this fail`,
  );
  documentStoreContract(test, { open: () => Promise.reject(new Error('skipped')) }, { skip: problem });
} else {
  test.before(async () => {
    container = await withTimeout(new MongoDBContainer(IMAGE).start(), 180_000, `starting ${IMAGE}`);
    // The replica set advertises the container's own host name: connect to the mapped port directly.
    url = `${container.getConnectionString()}/?directConnection=true`;
  });
  test.after(async () => {
    await container?.stop();
  });
  documentStoreContract(
    test,
    {
      // A database per test keeps tests apart; release drops it.
      open: () =>
        MongoDocumentStore.connect(url, `contract_${++databases}`, { serverSelectionTimeoutMS: 10_000 }),
      release: async (store) => {
        await store.dropAll();
        await store.close();
      },
    },
    { propertyRuns: 25, testTimeoutMs: 120_000 },
  );
}

// What the projector's stop on a permanent refusal (src/projection/follow.ts) meets from a real server:
// a document past 16 MB, through every write a projection makes, is a DocumentRefusedError (never a
// transient failure retried forever, nor an InvalidQueryError) and leaves the collection as it was.
// The embedded store keeps any size: this is MongoDB's own limit.
const TOO_LARGE_NAME = 'a document past 16 MB is a DocumentRefusedError on every write, and writes nothing';
(problem ? test.skip : test)(TOO_LARGE_NAME, async () => {
  const store = await MongoDocumentStore.connect(url, `contract_${++databases}`, {
    serverSelectionTimeoutMS: 10_000,
  });
  try {
    const c = store.collection('big');
    await c.insertOne({ _id: 'small', text: 'x', list: [] });
    // Just past the limit (the server's BadValue) and well past it (BSONObjectTooLarge).
    for (const size of [16 * 1024 * 1024 + 64, 17 * 1024 * 1024]) {
      const text = 'x'.repeat(size);
      const writes: [string, () => Promise<unknown>][] = [
        ['insertOne', () => c.insertOne({ _id: `big_${size}`, text })],
        ['insertMany', () => c.insertMany([{ _id: `many_${size}`, text }])],
        ['replaceOne', () => c.replaceOne({ _id: 'small' }, { _id: 'small', text })],
        [
          'replaceOne upsert',
          () => c.replaceOne({ _id: `up_${size}` }, { _id: `up_${size}`, text }, { upsert: true }),
        ],
        ['updateOne $set', () => c.updateOne({ _id: 'small' }, { $set: { text } })],
        ['updateOne upsert', () => c.updateOne({ _id: `up2_${size}` }, { $set: { text } }, { upsert: true })],
      ];
      for (const [what, write] of writes) {
        const err = await write().then(
          () => null,
          (e: unknown) => e,
        );
        assert.instance(err, DocumentRefusedError, `${what} of ${size} bytes: ${String(err)}`);
        assert.ok(isPermanentRefusal(err), what);
      }
    }
    // An update whose result grows past the limit, each part well under it.
    const half = 'y'.repeat(9 * 1024 * 1024);
    await c.updateOne({ _id: 'small' }, { $push: { list: half } });
    const grown = await c.updateOne({ _id: 'small' }, { $push: { list: half } }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(grown, DocumentRefusedError, `an update growing the document: ${String(grown)}`);
    assert.equal(
      (await c.find({}, { projection: { _id: 1 } })).map((d) => d._id),
      ['small'],
      'nothing else was written',
    );
    assert.is(((await c.findOne({ _id: 'small' })) as unknown as { list: string[] }).list.length, 1);
  } finally {
    await store.dropAll();
    await store.close();
  }
});

const server = (code: number, message: string) => new MongoServerError({ message, code, ok: 0 });

test('server errors map to the port: 11000 to DuplicateKeyError with the index name', () => {
  const dup = translateMongoError(
    server(
      11000,
      'E11000 duplicate key error collection: db.people index: email_unique dup key: { email: "a" }',
    ),
    'people',
  );
  assert.instance(dup, DuplicateKeyError);
  assert.is((dup as DuplicateKeyError).index, 'email_unique');
  assert.is((dup as DuplicateKeyError).collection, 'people');
  const onId = translateMongoError(
    server(11000, 'E11000 duplicate key error collection: db.r index: _id_ dup key'),
    'r',
  );
  assert.is((onId as DuplicateKeyError).index, '_id_');
});

test('server errors map to the port: bad filters and updates to InvalidQueryError, others unchanged', () => {
  for (const [code, message] of [
    [2, 'unknown operator: $foo'],
    [2, '$in needs an array'],
    [14, 'Cannot apply $inc to a value of non-numeric type'],
    [28, 'Cannot create field \'first\' in element {name: "Ada"}'],
    [40, "Updating the path 'a' would create a conflict at 'a'"],
    [66, "Performing an update on the path '_id' would modify the immutable field '_id'"],
    [51091, 'Regular expression is invalid'],
  ] as const) {
    assert.instance(translateMongoError(server(code, message), 'c'), InvalidQueryError, message);
  }
  assert.instance(
    translateMongoError(new MongoInvalidArgumentError('Update document requires atomic operators'), 'c'),
    InvalidQueryError,
  );
  const conflict = translateMongoError(server(85, 'Index already exists with a different name'), 'c');
  assert.instance(conflict, DocumentStoreError);
  assert.not.instance(conflict, InvalidQueryError);
  const network = new MongoNetworkError('connection reset');
  assert.is(translateMongoError(network, 'c'), network);
  const other = server(13, 'not authorized');
  assert.is(translateMongoError(other, 'c'), other);
});

test('a document the server refuses whatever the retry maps to DocumentRefusedError: a permanent refusal', () => {
  for (const [code, message] of [
    [121, 'Document failed validation'],
    [10334, 'BSONObj size: 16793600 (0x1004000) is invalid. Size must be between 0 and 16793600(16MB)'],
    [17419, 'Resulting document after update is larger than 16777216'],
    [17420, 'Replacement document is too large'],
  ] as const) {
    const mapped = translateMongoError(server(code, message), 'c');
    assert.instance(mapped, DocumentRefusedError, message);
    assert.ok(isPermanentRefusal(mapped), message);
  }
  // A document past 16 MB refused under another name: an insert a little over it (the server's
  // BadValue), and insertMany, whose bulk write the driver checks before sending anything.
  for (const err of [
    server(2, 'object to insert too large. size in bytes: 16777300, max size: 16777216'),
    new MongoInvalidArgumentError('Document is larger than the maximum size 16777216'),
  ]) {
    const mapped = translateMongoError(err, 'c');
    assert.instance(mapped, DocumentRefusedError, err.message);
    assert.ok(isPermanentRefusal(mapped), err.message);
  }
  // What the projector stops on (src/projection/follow.ts), and what it retries.
  assert.ok(isPermanentRefusal(translateMongoError(server(2, 'unknown operator: $foo'), 'c')));
  assert.ok(
    isPermanentRefusal(
      translateMongoError(
        server(11000, 'E11000 duplicate key error collection: db.p index: email_unique'),
        'p',
      ),
    ),
    'a unique index refusing a value refuses it again',
  );
  assert.not.ok(
    isPermanentRefusal(
      translateMongoError(server(11000, 'E11000 duplicate key error collection: db.r index: _id_'), 'r'),
    ),
    'two upserts racing on one _id: the retry finds the document',
  );
  assert.not.ok(isPermanentRefusal(translateMongoError(new MongoNetworkError('connection reset'), 'c')));
  assert.not.ok(isPermanentRefusal(translateMongoError(server(10107, 'not primary'), 'c')));
});

test('padded positions order as the bigints do', () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }),
      fc.bigInt({ min: 0n, max: 10n ** 20n - 1n }),
      (a, b) => {
        const pa = positionToPadded(a);
        assert.is(pa.length, 20);
        assert.is(BigInt(pa), a);
        assert.is(pa < positionToPadded(b), a < b);
      },
    ),
  );
});

test.run();
