// The DocumentStore port: read models as collections of documents with MongoDB query semantics.
// Adapters: embedded (mingo, in-process) and MongoDB. Both pass
// test/contracts/document-store.contract.ts.

export type Doc = { _id: string } & Record<string, unknown>;
/** MongoDB-style filter ({field: value}, $eq $ne $gt $gte $lt $lte $in $nin $exists $and $or $regex …). */
export type Filter = Record<string, unknown>;
/** Update operators supported by every adapter: $set $unset $inc $push $pull $setOnInsert $max $min. */
export type Update = Partial<
  Record<
    '$set' | '$unset' | '$inc' | '$push' | '$pull' | '$setOnInsert' | '$max' | '$min',
    Record<string, unknown>
  >
>;
export type Sort = Record<string, 1 | -1>;

export interface FindOptions {
  sort?: Sort;
  limit?: number;
  skip?: number;
  /** Inclusion projection ({field: 1}); _id is always returned. */
  projection?: Record<string, 1>;
}

export interface IndexSpec {
  keys: Record<string, 1 | -1>;
  unique?: boolean;
  name?: string;
  /**
   * A memory hint for the embedded store: how many leading fields of `keys` it keys the index on
   * (default: all). Its indexes answer equality (`field: v`, `$in`), a string range on the field after
   * the pinned ones, and a sort with a limit on the last keyed field (read in order), so the fields
   * after those (ranges and sorts it does in memory) cost a map entry per document for nothing. It keys the first `embeddedPrefix` fields only, and an index whose keyed
   * fields begin an earlier index's keyed fields (which the planner would pick for every filter
   * either may serve) keeps no entries at all. MongoDB ignores it and builds the full compound
   * index (its ranges and sorts use it). What a filter finds is unchanged, and a find sorted on the
   * cut fields lists in the same order (ties too); a find without a sort on a cut index may list in
   * another order (so may a limit without sort pick others), as between two MongoDB plans. Set it
   * only where no query pins a cut field by equality: such a query finds the same documents, but
   * narrows less and may be planned on another index, whose order the ties of a sort then take (as
   * between two MongoDB plans; an _id in the sort fixes them). Not part of the
   * index's identity: createIndex with other hints is the same index. Not for unique indexes
   * (their constraint is on every field).
   */
  embeddedPrefix?: number;
  /**
   * Index only the documents whose top-level fields equal these values (MongoDB's
   * partialFilterExpression, equalities only): a write that leaves them out costs the index nothing. A
   * query is planned on it only when its filter pins each of these fields to that value (as MongoDB's
   * planner requires); what any query finds is unchanged. Part of the index's identity. Not for
   * unique indexes.
   */
  partial?: Record<string, string | number | boolean>;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upsertedId: string | null;
}

export interface Collection<T extends Doc = Doc> {
  readonly name: string;
  /** Idempotent. A unique index makes a duplicate insert/update throw DuplicateKeyError. */
  createIndex(spec: IndexSpec): Promise<void>;
  insertOne(doc: T): Promise<void>;
  insertMany(docs: T[]): Promise<void>;
  replaceOne(filter: Filter, doc: T, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update): Promise<UpdateResult>;
  deleteOne(filter: Filter): Promise<number>;
  deleteMany(filter: Filter): Promise<number>;
  findOne(filter: Filter, options?: Omit<FindOptions, 'limit'>): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  count(filter?: Filter): Promise<number>;
}

export interface DocumentStore {
  readonly kind: 'embedded' | 'mongodb';
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /** Last log position a projection applied, or null. */
  getCheckpoint(projection: string): Promise<bigint | null>;
  /** Compare-and-set forward only: never moves a checkpoint backwards. */
  setCheckpoint(projection: string, position: bigint): Promise<void>;
  /**
   * getCheckpoint for several projections in one round trip (MongoDB: one find): every name asked is
   * in the map, with null when it has no checkpoint. No names: no round trip.
   */
  getCheckpoints(projections: readonly string[]): Promise<Map<string, bigint | null>>;
  /**
   * setCheckpoint for several projections in one round trip (MongoDB: one ordered bulk write of
   * upserts), each entry compare-and-set forward only, as setCheckpoint (a name given twice ends at the
   * higher position). Every position is checked before any is written (a bad one writes nothing).
   * Not atomic across names: a failure part-way (a lost connection, a timeout) may leave some entries
   * written and others not (MongoDB stops at the failing entry: those before it are written, but a
   * lost acknowledgement leaves even that unknown). The guarantee is per checkpoint, and it is the
   * caller's: pass only positions whose read-model writes are all acknowledged already, so whatever
   * part lands, no checkpoint is ever ahead of its writes; after a failure, count every entry as
   * unwritten (a replay from the older checkpoint re-applies events, which projections are built for).
   * No entries: no round trip.
   */
  setCheckpoints(entries: readonly (readonly [projection: string, position: bigint])[]): Promise<void>;
  /**
   * Drop every collection and checkpoint (rebuild from the log), but the collections named in `keep`:
   * state that is no read model (dashboard sessions, the shared rate-limit budgets) is not rebuilt
   * from the log, so a rebuild must leave it alone.
   */
  dropAll(keep?: readonly string[]): Promise<void>;
  /**
   * Drop the named collections, documents and indexes (one absent already is no error): MongoDB logs
   * one entry for a drop where `deleteMany({})` logs one per document. Handles given out stay valid
   * (a write through one makes the collection again, without its indexes).
   */
  dropCollections(names: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

export class DocumentStoreError extends Error {
  override name = 'DocumentStoreError';
}

export class DuplicateKeyError extends DocumentStoreError {
  override name = 'DuplicateKeyError';
  constructor(
    readonly collection: string,
    readonly index: string,
    message?: string,
  ) {
    super(message ?? `duplicate key in ${collection} on index ${index}`);
  }
}

/** A filter or update the store cannot run (unknown operator, wrong operand). */
export class InvalidQueryError extends DocumentStoreError {
  override name = 'InvalidQueryError';
}

/**
 * A document the store refuses and will refuse every time it is written: larger than it keeps
 * (MongoDB's 16 MB, an update whose result grows past it) or failing the collection's validation.
 */
export class DocumentRefusedError extends DocumentStoreError {
  override name = 'DocumentRefusedError';
}

/**
 * Whether a write failed on the store's own verdict, which retrying the same write never changes (a
 * document refused, a query the store cannot run, an index conflict), as opposed to a transient
 * failure (a connection lost, no writable primary, a timeout: not a DocumentStoreError) that a retry
 * gets past. A duplicate key on `_id` is transient: two upserts racing on one document meet it once.
 */
export function isPermanentRefusal(err: unknown): boolean {
  if (!(err instanceof DocumentStoreError)) return false;
  return !(err instanceof DuplicateKeyError && err.index === '_id_');
}
