// The DocumentStore over MongoDB (scaled-out deployment), through the official driver. Filters and
// updates pass through to the server after the same checks the embedded adapter makes, so a
// projection that runs on one runs on the other; server errors map to the port's errors.
import {
  type Db,
  type Document,
  type Collection as DriverCollection,
  MongoClient,
  type MongoClientOptions,
  MongoInvalidArgumentError,
  MongoServerError,
  ObjectId,
  ReadPreference,
} from 'mongodb';
import {
  type Collection,
  type Doc,
  DocumentRefusedError,
  DocumentStoreError,
  type DocumentStore as DocumentStorePort,
  DuplicateKeyError,
  type Filter,
  type FindOptions,
  type IndexSpec,
  InvalidQueryError,
  type Update,
  type UpdateResult,
} from '../../ports/document-store';
import { decodeStored } from './mongodb-stored-documents';
import {
  CHECKPOINTS_COLLECTION,
  indexName,
  parseUpdate,
  upsertIdFromFilter,
  validateCollectionName,
  validateDocument,
  validateFilter,
  validateFindOptions,
  validateIndexSpec,
  validatePosition,
} from './validate';

// Server codes for a filter, update or projection the server cannot run: BadValue,
// FailedToParse, TypeMismatch, PathNotViable, ConflictingUpdateOperators, DollarPrefixedFieldName,
// EmptyFieldName, DottedFieldName, ImmutableField, invalid regex, projection path collisions.
const INVALID_QUERY_CODES = new Set([2, 9, 14, 28, 40, 52, 56, 57, 66, 51091, 31249, 31250, 31254]);
// IndexOptionsConflict, IndexKeySpecsConflict, CannotCreateIndex, CannotIndexParallelArrays.
const INDEX_CONFLICT_CODES = new Set([85, 86, 67, 171]);
// A document the server refuses whenever it is written: DocumentValidationFailure, BSONObjectTooLarge,
// and an update or replacement whose result would pass 16 MB.
const REFUSED_DOCUMENT_CODES = new Set([121, 10334, 17419, 17420]);
/**
 * A document past 16 MB refused under another name: the server's BadValue (code 2) "object to insert
 * too large" (an insert a little over 16 MB), and the driver's own MongoInvalidArgumentError "Document
 * is larger than the maximum size" (insertMany, which goes through a bulk write and checks each
 * document before sending any). Both were InvalidQueryErrors: still a permanent refusal, but the
 * stopped projector then named a query the store cannot run (/healthz, `projections status`), not a
 * document too large, as the port promises (DocumentRefusedError).
 */
const TOO_LARGE = /too large|larger than the maximum size/i;

/** Maps a driver error to the port's errors; anything else (network, auth) passes unchanged. */
export function translateMongoError(err: unknown, collection: string): unknown {
  let out: Error | undefined;
  if (err instanceof MongoServerError) {
    const code = Number(err.code);
    if (code === 11000) {
      const index = /index: (\S+)/.exec(err.message)?.[1] ?? 'unknown';
      out = new DuplicateKeyError(collection, index, err.message);
    } else if (REFUSED_DOCUMENT_CODES.has(code) || (code === 2 && TOO_LARGE.test(err.message)))
      out = new DocumentRefusedError(err.message);
    else if (INVALID_QUERY_CODES.has(code)) out = new InvalidQueryError(err.message);
    else if (INDEX_CONFLICT_CODES.has(code)) out = new DocumentStoreError(err.message);
  } else if (err instanceof MongoInvalidArgumentError)
    out = TOO_LARGE.test(err.message)
      ? new DocumentRefusedError(err.message)
      : new InvalidQueryError(err.message);
  if (out === undefined) return err;
  return Object.assign(out, { cause: err });
}

/**
 * A collection dropped meanwhile (another process's rebuild, between the listing and the drop) is
 * already gone: MongoDB's NamespaceNotFound (code 26). Driver 6+ answers false itself; kept for a
 * server or driver that still throws it.
 */
const ignoreNamespaceNotFound = (err: unknown): false => {
  if ((err as { code?: unknown } | null)?.code === 26) return false;
  throw err;
};

async function run<R>(collection: string, op: () => Promise<R>): Promise<R> {
  try {
    return await op();
  } catch (err) {
    throw translateMongoError(err, collection);
  }
}

/**
 * The read models' database on `client`, read on the primary whatever MONGODB_URL's readPreference
 * says (as stream reads go to the EventStoreDB leader): a projection reads a document and writes what
 * it computed from it, so a secondary's copy, behind the primary, would overwrite the updates it has
 * not replicated yet; and a request that waited for the checkpoints (read your writes) must then read
 * documents at least as new as they say, which another secondary may not hold yet.
 */
export function readModelsDb(client: MongoClient, dbName: string): Db {
  return client.db(dbName, { readPreference: ReadPreference.primary });
}

/** Positions as zero-padded 20-digit strings: string order is numeric order, across stores. */
export const positionToPadded = (position: bigint): string => position.toString().padStart(20, '0');

class MongoCollection<T extends Doc> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly coll: DriverCollection<Document>,
  ) {}

  async createIndex(spec: IndexSpec): Promise<void> {
    validateIndexSpec(spec);
    const options = {
      name: indexName(spec),
      ...(spec.unique ? { unique: true } : {}),
      ...(spec.partial ? { partialFilterExpression: spec.partial } : {}),
    };
    await run(this.name, () => this.coll.createIndex(spec.keys, options));
  }

  async insertOne(doc: T): Promise<void> {
    validateDocument(doc);
    await run(this.name, () => this.coll.insertOne(doc as Document));
  }

  async insertMany(docs: T[]): Promise<void> {
    for (const doc of docs) validateDocument(doc);
    if (docs.length === 0) return;
    await run(this.name, () => this.coll.insertMany(docs as Document[], { ordered: true }));
  }

  async replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult> {
    validateFilter(filter);
    validateDocument(doc, 'replacement');
    const upsert = options?.upsert === true;
    if (upsert) {
      const id = upsertIdFromFilter(filter);
      if (id !== undefined && id !== doc._id) {
        throw new InvalidQueryError('replaceOne upsert: the replacement _id differs from the filter');
      }
    }
    const r = await run(this.name, () => this.coll.replaceOne(filter, doc as Document, { upsert }));
    return result(r.matchedCount, r.modifiedCount, r.upsertedId);
  }

  async updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult> {
    validateFilter(filter);
    const parsed = parseUpdate(update);
    const upsert = options?.upsert === true;
    let sent = update as Document;
    if (upsert) {
      const fromFilter = upsertIdFromFilter(filter);
      if (
        fromFilter !== undefined &&
        parsed.idFromUpdate !== undefined &&
        fromFilter !== parsed.idFromUpdate
      ) {
        throw new InvalidQueryError('upsert: the update sets an _id other than the filter');
      }
      // Documents keep string ids: an upsert that names none would otherwise get an ObjectId.
      if (fromFilter === undefined && parsed.idFromUpdate === undefined) {
        sent = { ...update, $setOnInsert: { ...update.$setOnInsert, _id: new ObjectId().toHexString() } };
      }
    }
    const r = await run(this.name, () => this.coll.updateOne(filter, sent, { upsert }));
    return result(r.matchedCount, r.modifiedCount, r.upsertedId);
  }

  async updateMany(filter: Filter, update: Update): Promise<UpdateResult> {
    validateFilter(filter);
    parseUpdate(update);
    const r = await run(this.name, () => this.coll.updateMany(filter, update as Document));
    return result(r.matchedCount, r.modifiedCount, null);
  }

  async deleteOne(filter: Filter): Promise<number> {
    validateFilter(filter);
    return (await run(this.name, () => this.coll.deleteOne(filter))).deletedCount;
  }

  async deleteMany(filter: Filter): Promise<number> {
    validateFilter(filter);
    return (await run(this.name, () => this.coll.deleteMany(filter))).deletedCount;
  }

  async findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null> {
    validateFilter(filter);
    validateFindOptions(options);
    // Its bytes, decoded as stored (decodeStored: the driver's decoder makes some partner JSON DBRefs).
    const found = await run(this.name, () =>
      this.coll.findOne(filter, { ...driverFindOptions(options), raw: true }),
    );
    return found === null ? null : (decodeStored(found as unknown as Uint8Array) as T);
  }

  async find(filter: Filter, options?: FindOptions): Promise<T[]> {
    validateFilter(filter);
    validateFindOptions(options);
    const found = await run(this.name, () =>
      this.coll.find(filter, { ...driverFindOptions(options), raw: true }).toArray(),
    );
    return found.map((bytes) => decodeStored(bytes as unknown as Uint8Array) as T);
  }

  async count(filter?: Filter): Promise<number> {
    if (filter !== undefined) validateFilter(filter);
    return run(this.name, () => this.coll.countDocuments(filter ?? {}));
  }
}

function driverFindOptions(options: FindOptions | undefined) {
  if (options === undefined) return {};
  const { sort, skip, limit, projection } = options;
  return {
    ...(sort !== undefined && { sort }),
    ...(skip !== undefined && { skip }),
    ...(limit !== undefined && { limit }),
    ...(projection !== undefined && { projection }),
  };
}

function result(matched: number, modified: number, upsertedId: unknown): UpdateResult {
  return {
    matched,
    modified,
    upsertedId: upsertedId === null || upsertedId === undefined ? null : String(upsertedId),
  };
}

interface CheckpointDoc {
  _id: string;
  position: string;
}

export class MongoDocumentStore implements DocumentStorePort {
  readonly kind = 'mongodb' as const;
  private readonly handles = new Map<string, MongoCollection<Doc>>();

  private constructor(
    /** Shared with the rate limiter, so every API process draws from one budget. */
    readonly client: MongoClient,
    private readonly db: Db,
  ) {}

  /**
   * Connects (the driver's options pass through, e.g. serverSelectionTimeoutMS) and checks the server
   * answers. `newClient` lets a test see the databases the store asks of its client.
   */
  static async connect(
    url: string,
    dbName: string,
    options?: MongoClientOptions,
    newClient: (url: string, options?: MongoClientOptions) => MongoClient = (u, o) => new MongoClient(u, o),
  ): Promise<MongoDocumentStore> {
    const client = newClient(url, options);
    try {
      await client.connect();
      const db = readModelsDb(client, dbName);
      await db.command({ ping: 1 });
      return new MongoDocumentStore(client, db);
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let handle = this.handles.get(name);
    if (handle === undefined) {
      validateCollectionName(name);
      handle = new MongoCollection(name, this.db.collection(name));
      this.handles.set(name, handle);
    }
    return handle as unknown as Collection<T>;
  }

  private get checkpoints(): DriverCollection<CheckpointDoc> {
    return this.db.collection<CheckpointDoc>(CHECKPOINTS_COLLECTION);
  }

  async getCheckpoint(projection: string): Promise<bigint | null> {
    const doc = await run(CHECKPOINTS_COLLECTION, () => this.checkpoints.findOne({ _id: projection }));
    return doc ? BigInt(doc.position) : null;
  }

  async setCheckpoint(projection: string, position: bigint): Promise<void> {
    validatePosition(position);
    // $max on zero-padded strings is a compare-and-set that only moves forward, in one round trip.
    const write = () =>
      this.checkpoints.updateOne(
        { _id: projection },
        { $max: { position: positionToPadded(position) } },
        { upsert: true },
      );
    try {
      await run(CHECKPOINTS_COLLECTION, write);
    } catch (err) {
      // Two first writes raced on the upsert: the loser's document now exists, so retry as an update.
      if (!(err instanceof DuplicateKeyError)) throw err;
      await run(CHECKPOINTS_COLLECTION, write);
    }
  }

  async getCheckpoints(projections: readonly string[]): Promise<Map<string, bigint | null>> {
    const out = new Map<string, bigint | null>();
    for (const name of projections) out.set(name, null);
    if (out.size === 0) return out;
    const names = [...out.keys()];
    // One find for every name (16 projections: one round trip, not 16).
    const docs = await run(CHECKPOINTS_COLLECTION, () =>
      this.checkpoints.find({ _id: { $in: names } }).toArray(),
    );
    for (const doc of docs) out.set(doc._id, BigInt(doc.position));
    return out;
  }

  async setCheckpoints(entries: readonly (readonly [string, bigint])[]): Promise<void> {
    for (const [, position] of entries) validatePosition(position);
    if (entries.length === 0) return;
    // One bulk write of setCheckpoint's upserts ($max: forward only). Ordered: the server applies them
    // in turn and stops at the first that fails, so a failure part-way leaves a prefix written (see
    // the port: the caller passes positions whose writes are acknowledged, so any part is safe).
    const ops = entries.map(([name, position]) => ({
      updateOne: {
        filter: { _id: name },
        update: { $max: { position: positionToPadded(position) } },
        upsert: true,
      },
    }));
    const write = () => this.checkpoints.bulkWrite(ops, { ordered: true });
    try {
      await run(CHECKPOINTS_COLLECTION, write);
    } catch (err) {
      // Two first writes raced on an upsert: that document now exists. Again as a whole ($max: the
      // entries written already change nothing).
      if (!(err instanceof DuplicateKeyError)) throw err;
      await run(CHECKPOINTS_COLLECTION, write);
    }
  }

  async dropAll(keep: readonly string[] = []): Promise<void> {
    if (keep.length === 0) {
      await run('*', () => this.db.dropDatabase());
      return;
    }
    const names = await run('*', () => this.db.listCollections({}, { nameOnly: true }).toArray());
    for (const { name } of names)
      if (!keep.includes(name) && !name.startsWith('system.'))
        await run(name, () => this.db.dropCollection(name).catch(ignoreNamespaceNotFound));
  }

  async dropCollections(names: readonly string[]): Promise<void> {
    for (const name of names) {
      validateCollectionName(name);
      await run(name, () => this.db.dropCollection(name).catch(ignoreNamespaceNotFound));
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
