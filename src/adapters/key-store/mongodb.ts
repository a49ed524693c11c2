// The scaled-out KeyStore: a collection in a MongoDB database of its own (never the read models'
// database, which `read-models rebuild` drops). Writes are acknowledged by a majority with the
// journal. A destroyed key leaves a tombstone; MongoDB may keep the old value in its oplog and
// backups for their retention period (docs/AUDIT.md).
import { randomBytes } from 'node:crypto';
import { Binary, type Collection, MongoClient, type MongoClientOptions } from 'mongodb';
import {
  KeyDestroyedError,
  type KeyLookup,
  type KeyStore,
  KeyStoreError,
  validateSubject,
} from '../../ports/key-store';

interface KeyDoc {
  _id: string;
  key: Binary | null;
  created_at: string;
  destroyed_at: string | null;
}

const COLLECTION = 'subject_keys';
const WRITE = { writeConcern: { w: 'majority' as const, journal: true } };

/** The keys' database: the read models' name with `_keys`, within MongoDB's 63-byte limit. */
export function keysDatabaseName(readModelsDb: string): string {
  return `${Buffer.from(readModelsDb).subarray(0, 58).toString()}_keys`;
}

export class MongoKeyStore implements KeyStore {
  readonly kind = 'mongodb' as const;
  private closed = false;

  private constructor(
    private readonly client: MongoClient,
    private readonly keys: Collection<KeyDoc>,
  ) {}

  static async connect(url: string, dbName: string, options?: MongoClientOptions): Promise<MongoKeyStore> {
    const client = new MongoClient(url, options);
    try {
      await client.connect();
      const db = client.db(dbName);
      await db.command({ ping: 1 });
      return new MongoKeyStore(client, db.collection<KeyDoc>(COLLECTION));
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  private open(): void {
    if (this.closed) throw new KeyStoreError('the key store is closed');
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    let doc = await this.keys.findOne({ _id: s });
    if (doc === null) {
      try {
        await this.keys.updateOne(
          { _id: s },
          {
            $setOnInsert: {
              key: new Binary(randomBytes(32)),
              created_at: new Date().toISOString(),
              destroyed_at: null,
            },
          },
          { upsert: true, ...WRITE },
        );
      } catch (err) {
        // Two first uses raced on the upsert: the other one's key is there now.
        if ((err as { code?: number }).code !== 11000) throw err;
      }
      doc = await this.keys.findOne({ _id: s });
    }
    if (doc?.key == null) throw new KeyDestroyedError(s);
    return Buffer.from(doc.key.buffer);
  }

  async obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    this.open();
    const wanted = [...new Set(subjects.map(validateSubject))];
    const out = new Map<string, Buffer | null>();
    if (wanted.length === 0) return out;
    const read = async (ids: string[]) => {
      for await (const doc of this.keys.find({ _id: { $in: ids } }))
        out.set(doc._id, doc.key == null ? null : Buffer.from(doc.key.buffer));
    };
    await read(wanted);
    const missing = wanted.filter((s) => !out.has(s));
    if (missing.length === 0) return out;
    const created_at = new Date().toISOString();
    const fresh = randomBytes(32 * missing.length);
    try {
      // One unordered bulk write (majority, journal) for every new key.
      await this.keys.bulkWrite(
        missing.map((s, i) => ({
          updateOne: {
            filter: { _id: s },
            update: {
              $setOnInsert: {
                key: new Binary(Buffer.from(fresh.subarray(32 * i, 32 * i + 32))),
                created_at,
                destroyed_at: null,
              },
            },
            upsert: true,
          },
        })),
        { ordered: false, ...WRITE },
      );
    } catch (err) {
      // Upserts racing with another first use: the other one's keys are there now.
      const errors = (err as { writeErrors?: { code?: number }[] | { code?: number } }).writeErrors;
      const list = Array.isArray(errors) ? errors : errors ? [errors] : [];
      if (list.length === 0 || list.some((e) => e.code !== 11000)) throw err;
    }
    await read(missing);
    for (const s of missing)
      if (!out.has(s)) throw new KeyStoreError(`the key of ${s} was neither found nor created`);
    return out;
  }

  async find(subject: string): Promise<KeyLookup> {
    this.open();
    const doc = await this.keys.findOne({ _id: validateSubject(subject) });
    if (doc === null) return { state: 'none' };
    if (doc.key === null) return { state: 'destroyed', destroyedAt: doc.destroyed_at as string };
    return { state: 'active', key: Buffer.from(doc.key.buffer) };
  }

  async findMany(subjects: readonly string[]): Promise<Map<string, KeyLookup>> {
    this.open();
    const wanted = [...new Set(subjects.map(validateSubject))];
    const out = new Map<string, KeyLookup>();
    for (const s of wanted) out.set(s, { state: 'none' });
    if (wanted.length === 0) return out;
    for await (const doc of this.keys.find({ _id: { $in: wanted } }))
      out.set(
        doc._id,
        doc.key == null
          ? { state: 'destroyed', destroyedAt: doc.destroyed_at as string }
          : { state: 'active', key: Buffer.from(doc.key.buffer) },
      );
    return out;
  }

  async destroy(subject: string, at: string): Promise<boolean> {
    this.open();
    const s = validateSubject(subject);
    const r = await this.keys.updateOne(
      { _id: s, key: { $ne: null } },
      { $set: { key: null, destroyed_at: at } },
      WRITE,
    );
    if (r.modifiedCount > 0) return true;
    try {
      await this.keys.updateOne(
        { _id: s },
        { $setOnInsert: { key: null, created_at: at, destroyed_at: at } },
        { upsert: true, ...WRITE },
      );
    } catch (err) {
      if ((err as { code?: number }).code !== 11000) throw err;
    }
    // A key obtained between the two writes is destroyed too.
    const late = await this.keys.updateOne(
      { _id: s, key: { $ne: null } },
      { $set: { key: null, destroyed_at: at } },
      WRITE,
    );
    return late.modifiedCount > 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }
}
