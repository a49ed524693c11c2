// In-memory KeyStore for unit tests: same rules as the durable ones (key pages included).
import { randomBytes } from 'node:crypto';
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

export class MemoryKeyStore implements KeyStore {
  readonly kind = 'memory' as const;
  private readonly keys = new Map<string, { key: Buffer | null; destroyedAt: string | null }>();
  /** Page → its slots (null: destroyed, with the time in `destroyed`). */
  private readonly pages = new Map<string, { keys: (Buffer | null)[]; destroyed: (string | null)[] }>();
  private closed = false;

  private open(): void {
    if (this.closed) throw new KeyStoreError('the key store is closed');
  }

  /** A page subject's state (a tombstone in `keys` wins), or undefined for a per-subject one. */
  private paged(s: string): KeyLookup | undefined {
    const at = parsePageKeySubject(s);
    if (at === null) return undefined;
    const tomb = this.keys.get(s);
    if (tomb !== undefined) return { state: 'destroyed', destroyedAt: tomb.destroyedAt as string };
    const page = this.pages.get(at.page);
    if (page === undefined || at.slot >= page.keys.length) return { state: 'none' };
    const key = page.keys[at.slot] as Buffer | null;
    return key === null
      ? { state: 'destroyed', destroyedAt: page.destroyed[at.slot] as string }
      : { state: 'active', key: Buffer.from(key) };
  }

  private obtainOne(s: string): Buffer | null {
    const paged = this.paged(s);
    if (paged !== undefined) return pagedKeyAnswer(s, paged);
    let entry = this.keys.get(s);
    if (!entry) {
      entry = { key: randomBytes(32), destroyedAt: null };
      this.keys.set(s, entry);
    }
    return entry.key === null ? null : Buffer.from(entry.key);
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    const key = this.obtainOne(s);
    if (key === null) throw new KeyDestroyedError(s);
    return key;
  }

  async obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    this.open();
    const wanted = subjects.map(validateSubject);
    for (const s of wanted)
      if (this.paged(s)?.state === 'none')
        throw new KeyStoreError(`no key page holds ${s} (createPage makes them)`);
    const out = new Map<string, Buffer | null>();
    for (const s of wanted) out.set(s, this.obtainOne(s));
    return out;
  }

  async createPage(count: number): Promise<KeyPage> {
    this.open();
    const { page, keys } = freshKeyPage(count);
    this.pages.set(page, { keys: keys.map((k) => Buffer.from(k)), destroyed: keys.map(() => null) });
    return { page, keys };
  }

  private lookup(s: string): KeyLookup {
    const paged = this.paged(s);
    if (paged !== undefined) return paged;
    const entry = this.keys.get(s);
    if (!entry) return { state: 'none' };
    if (entry.key === null) return { state: 'destroyed', destroyedAt: entry.destroyedAt as string };
    return { state: 'active', key: Buffer.from(entry.key) };
  }

  async find(subject: string): Promise<KeyLookup> {
    this.open();
    return this.lookup(validateSubject(subject));
  }

  async findMany(subjects: readonly string[]): Promise<Map<string, KeyLookup>> {
    const wanted = subjects.map(validateSubject);
    const out = new Map<string, KeyLookup>();
    this.open();
    for (const s of wanted) out.set(s, this.lookup(s));
    return out;
  }

  async destroy(subject: string, at: string): Promise<boolean> {
    this.open();
    const s = validateSubject(subject);
    const place = parsePageKeySubject(s);
    const page = place === null ? undefined : this.pages.get(place.page);
    if (place !== null && page !== undefined && place.slot < page.keys.length) {
      const key = page.keys[place.slot];
      if (key === null || key === undefined) return false;
      key.fill(0);
      page.keys[place.slot] = null;
      page.destroyed[place.slot] = at;
      return true;
    }
    const entry = this.keys.get(s);
    if (entry?.key === null) return false;
    entry?.key?.fill(0);
    this.keys.set(s, { key: null, destroyedAt: at });
    return entry !== undefined;
  }

  private readonly links = new Map<string, Set<string>>();

  async link(label: string, member: string): Promise<void> {
    this.open();
    const l = validateLinkPart(label, 'label');
    const m = validateLinkPart(member, 'member');
    let set = this.links.get(l);
    if (set === undefined) {
      set = new Set();
      this.links.set(l, set);
    }
    set.add(m);
  }

  async linked(label: string): Promise<string[]> {
    this.open();
    return [...(this.links.get(validateLinkPart(label, 'label')) ?? [])];
  }

  async unlink(label: string): Promise<number> {
    this.open();
    const l = validateLinkPart(label, 'label');
    const n = this.links.get(l)?.size ?? 0;
    this.links.delete(l);
    return n;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
