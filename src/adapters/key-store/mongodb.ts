// The scaled-out KeyStore: a collection in a MongoDB database of its own (never the read models'
// database, which `read-models rebuild` drops). Writes are acknowledged by a majority with the
// journal. A destroyed key leaves a tombstone; MongoDB may keep the old value in its oplog and
// backups for their retention period (docs/AUDIT.md).
//
// Two layouts, both read: `subject_keys`, one document per subject (customers' own keys, pool keys
// made before pages, every tombstone), and `key_pages`, one document per page of keys (`keys`: an
// array of 32-byte binaries; subject `key:<page>.<slot>`). Destroying a page's key `$set`s its slot to
// null (with the time in `destroyed_at.<slot>`) in one atomic update of the page, so it is gone from
// the current data at once; a tombstone in `subject_keys` (left when the page holds no such slot)
// wins over the page.
import { randomBytes } from 'node:crypto';
import {
  Binary,
  type Collection,
  type Db,
  MongoClient,
  type MongoClientOptions,
  ReadPreference,
} from 'mongodb';
import {
  freshKeyPage,
  KeyDestroyedError,
  type KeyLookup,
  type KeyPage,
  type KeyStore,
  KeyStoreError,
  pagedKeyAnswer,
  parsePageKeySubject,
  validateLinkPart,
  validateSubject,
} from '../../ports/key-store';

interface KeyDoc {
  _id: string;
  key: Binary | null;
  created_at: string;
  destroyed_at: string | null;
}

interface PageDoc {
  _id: string;
  /** Slot i's key; null once destroyed. */
  keys: (Binary | null)[];
  created_at: string;
  /** Slot (as a string) → when its key was destroyed. */
  destroyed_at: Record<string, string>;
}

/** A link (KeyStore.link): one document per label and member. */
interface LinkDoc {
  _id: { label: string; member: string };
  created_at: string;
}

const COLLECTION = 'subject_keys';
const LINKS = 'key_links';
const PAGES = 'key_pages';
const WRITE = { writeConcern: { w: 'majority' as const, journal: true } };

export { keysDatabaseName } from './keys-database-name';

/**
 * The keys' database on `client`, read on the primary whatever MONGODB_URL's readPreference says: a
 * secondary behind it reads a key made a moment ago as missing (obtain then calls it destroyed) and a
 * key destroyed a moment ago as active (an erased customer's data sealed or sent again).
 */
export function keysDb(client: MongoClient, dbName: string): Db {
  return client.db(dbName, { readPreference: ReadPreference.primary });
}

export class MongoKeyStore implements KeyStore {
  readonly kind = 'mongodb' as const;
  private closed = false;

  private constructor(
    private readonly client: MongoClient,
    private readonly keys: Collection<KeyDoc>,
    private readonly pages: Collection<PageDoc>,
    private readonly links: Collection<LinkDoc>,
  ) {}

  /** `newClient` lets a test see the databases the store asks of its client. */
  static async connect(
    url: string,
    dbName: string,
    options?: MongoClientOptions,
    newClient: (url: string, options?: MongoClientOptions) => MongoClient = (u, o) => new MongoClient(u, o),
  ): Promise<MongoKeyStore> {
    const client = newClient(url, options);
    try {
      await client.connect();
      const db = keysDb(client, dbName);
      await db.command({ ping: 1 });
      // The _id index keys the whole {label, member} document, so it serves no query on `_id.label`
      // alone: linked() and unlink() need an index of their own (idempotent at every connect).
      await db
        .collection<LinkDoc>(LINKS)
        .createIndex({ '_id.label': 1, created_at: 1 }, { name: 'label_created' });
      return new MongoKeyStore(
        client,
        db.collection<KeyDoc>(COLLECTION),
        db.collection<PageDoc>(PAGES),
        db.collection<LinkDoc>(LINKS),
      );
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  private open(): void {
    if (this.closed) throw new KeyStoreError('the key store is closed');
  }

  /**
   * The state of every page subject among `subjects` (a tombstone in subject_keys wins over its
   * page): one query on each collection.
   */
  private async pagedLookups(subjects: readonly string[]): Promise<Map<string, KeyLookup>> {
    const out = new Map<string, KeyLookup>();
    const places = new Map<string, { page: string; slot: number }>();
    for (const s of subjects) {
      const at = parsePageKeySubject(s);
      if (at !== null) places.set(s, at);
    }
    if (places.size === 0) return out;
    const pageIds = [...new Set([...places.values()].map((p) => p.page))];
    const docs = new Map<string, PageDoc>();
    for await (const doc of this.pages.find({ _id: { $in: pageIds } })) docs.set(doc._id, doc);
    for (const [s, { page, slot }] of places) {
      const doc = docs.get(page);
      const key = doc === undefined || slot >= doc.keys.length ? undefined : doc.keys[slot];
      out.set(
        s,
        key === undefined
          ? { state: 'none' }
          : key === null
            ? { state: 'destroyed', destroyedAt: doc?.destroyed_at?.[String(slot)] ?? '' }
            : { state: 'active', key: Buffer.from(key.buffer) },
      );
    }
    for await (const doc of this.keys.find({ _id: { $in: [...places.keys()] }, key: null }))
      out.set(doc._id, { state: 'destroyed', destroyedAt: doc.destroyed_at as string });
    return out;
  }

  async createPage(count: number): Promise<KeyPage> {
    this.open();
    const { page, keys } = freshKeyPage(count);
    // One document, one majority/journaled write, however many keys.
    await this.pages.insertOne(
      {
        _id: page,
        keys: keys.map((k) => new Binary(k)),
        created_at: new Date().toISOString(),
        destroyed_at: {},
      },
      WRITE,
    );
    return { page, keys };
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    if (parsePageKeySubject(s) !== null) {
      const key = pagedKeyAnswer(s, (await this.pagedLookups([s])).get(s) as KeyLookup);
      if (key === null) throw new KeyDestroyedError(s);
      return key;
    }
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
    const all = [...new Set(subjects.map(validateSubject))];
    const out = new Map<string, Buffer | null>();
    // Page subjects are answered as they are (never made here); a missing one refuses the call.
    const paged = await this.pagedLookups(all);
    for (const [s, found] of paged) out.set(s, pagedKeyAnswer(s, found));
    const wanted = all.filter((s) => !paged.has(s));
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
    const s = validateSubject(subject);
    if (parsePageKeySubject(s) !== null) return (await this.pagedLookups([s])).get(s) as KeyLookup;
    const doc = await this.keys.findOne({ _id: s });
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
    const paged = await this.pagedLookups(wanted);
    for (const [s, found] of paged) out.set(s, found);
    const plain = wanted.filter((s) => !paged.has(s));
    if (plain.length === 0) return out;
    for await (const doc of this.keys.find({ _id: { $in: plain } }))
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
    const place = parsePageKeySubject(s);
    if (place !== null) {
      // The slot set to null in one atomic update of the page: the key is gone from the data at once.
      const slot = `keys.${place.slot}`;
      const p = await this.pages.updateOne(
        { _id: place.page, [slot]: { $type: 'binData' } },
        { $set: { [slot]: null, [`destroyed_at.${place.slot}`]: at } },
        WRITE,
      );
      if (p.modifiedCount > 0) return true;
      // Destroyed already: nothing changes (its time stays). No such slot: a tombstone below.
      const doc = await this.pages.findOne({ _id: place.page }, { projection: { n: { $size: '$keys' } } });
      if (doc !== null && place.slot < (doc as unknown as { n: number }).n) return false;
    }
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

  async link(label: string, member: string): Promise<void> {
    this.open();
    const _id = { label: validateLinkPart(label, 'label'), member: validateLinkPart(member, 'member') };
    await this.links.updateOne(
      { _id },
      { $setOnInsert: { created_at: new Date().toISOString() } },
      { upsert: true, ...WRITE },
    );
  }

  async linked(label: string): Promise<string[]> {
    this.open();
    const l = validateLinkPart(label, 'label');
    // Served by the label_created index (connect()).
    const docs = await this.links.find({ '_id.label': l }).sort({ created_at: 1, '_id.member': 1 }).toArray();
    return docs.map((d) => d._id.member);
  }

  async unlink(label: string): Promise<number> {
    this.open();
    const r = await this.links.deleteMany({ '_id.label': validateLinkPart(label, 'label') }, WRITE);
    return r.deletedCount;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }
}
