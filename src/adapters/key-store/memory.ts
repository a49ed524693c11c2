// In-memory KeyStore for unit tests: same rules as the durable ones.
import { randomBytes } from 'node:crypto';
import {
  KeyDestroyedError,
  type KeyLookup,
  type KeyStore,
  KeyStoreError,
  validateSubject,
} from '../../ports/key-store';

export class MemoryKeyStore implements KeyStore {
  readonly kind = 'memory' as const;
  private readonly keys = new Map<string, { key: Buffer | null; destroyedAt: string | null }>();
  private closed = false;

  private open(): void {
    if (this.closed) throw new KeyStoreError('the key store is closed');
  }

  async obtain(subject: string): Promise<Buffer> {
    this.open();
    const s = validateSubject(subject);
    let entry = this.keys.get(s);
    if (!entry) {
      entry = { key: randomBytes(32), destroyedAt: null };
      this.keys.set(s, entry);
    }
    if (entry.key === null) throw new KeyDestroyedError(s);
    return Buffer.from(entry.key);
  }

  async obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    this.open();
    const wanted = subjects.map(validateSubject);
    const out = new Map<string, Buffer | null>();
    for (const s of wanted) {
      let entry = this.keys.get(s);
      if (!entry) {
        entry = { key: randomBytes(32), destroyedAt: null };
        this.keys.set(s, entry);
      }
      out.set(s, entry.key === null ? null : Buffer.from(entry.key));
    }
    return out;
  }

  async find(subject: string): Promise<KeyLookup> {
    this.open();
    const entry = this.keys.get(validateSubject(subject));
    if (!entry) return { state: 'none' };
    if (entry.key === null) return { state: 'destroyed', destroyedAt: entry.destroyedAt as string };
    return { state: 'active', key: Buffer.from(entry.key) };
  }

  async findMany(subjects: readonly string[]): Promise<Map<string, KeyLookup>> {
    const wanted = subjects.map(validateSubject);
    const out = new Map<string, KeyLookup>();
    this.open();
    for (const s of wanted) {
      const entry = this.keys.get(s);
      out.set(
        s,
        !entry
          ? { state: 'none' }
          : entry.key === null
            ? { state: 'destroyed', destroyedAt: entry.destroyedAt as string }
            : { state: 'active', key: Buffer.from(entry.key) },
      );
    }
    return out;
  }

  async destroy(subject: string, at: string): Promise<boolean> {
    this.open();
    const s = validateSubject(subject);
    const entry = this.keys.get(s);
    if (entry?.key === null) return false;
    entry?.key?.fill(0);
    this.keys.set(s, { key: null, destroyedAt: at });
    return entry !== undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
