// The KeyStore port: one secret key per data subject (a customer), kept outside the event log, so
// that destroying the key makes the personal data sealed with it unreadable everywhere the log goes
// (crypto-shredding, docs/AUDIT.md). Adapters: memory (tests), SQLite (embedded: a file beside the
// log), MongoDB (scaled out: a database of its own). All pass test/contracts/key-store.contract.ts.

export type KeyLookup =
  | { state: 'active'; key: Buffer }
  | { state: 'destroyed'; destroyedAt: string }
  | { state: 'none' };

export interface KeyStore {
  readonly kind: 'memory' | 'sqlite' | 'mongodb';
  /**
   * The subject's key (32 bytes), created on first use and durable before this resolves (an event
   * sealed with it must never outlive it by accident). Concurrent first uses get the same key.
   * Throws KeyDestroyedError for a destroyed key: it never comes back, and no new one is made.
   */
  obtain(subject: string): Promise<Buffer>;
  /**
   * obtain() for many subjects at once, in one durable write (one transaction, one fsync; one bulk
   * write on MongoDB) however many keys it creates: what a batch of new customers costs. Answers
   * every distinct subject: its key, or null when the key was destroyed (no new one is made).
   * Same guarantees as obtain (durable before it resolves; concurrent first uses get one key). A bad
   * subject refuses the whole call (KeyStoreError) before anything is written.
   */
  obtainMany(subjects: readonly string[]): Promise<Map<string, Buffer | null>>;
  find(subject: string): Promise<KeyLookup>;
  /**
   * find() for many subjects in one look-up (one statement; one query on MongoDB): every distinct
   * subject answered, `none` included. Writes nothing. A bad subject refuses the whole call.
   */
  findMany(subjects: readonly string[]): Promise<Map<string, KeyLookup>>;
  /**
   * Destroys the key for good and leaves a tombstone (so no new key is ever made for the subject).
   * Idempotent; answers true when a key was destroyed by this call.
   */
  destroy(subject: string, at: string): Promise<boolean>;
  close(): Promise<void>;
}

export class KeyStoreError extends Error {
  override name = 'KeyStoreError';
}

export class KeyDestroyedError extends KeyStoreError {
  override name = 'KeyDestroyedError';
  constructor(readonly subject: string) {
    super(`the key of ${subject} was destroyed (erased)`);
  }
}

export function validateSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 200)
    throw new KeyStoreError(
      `a key subject is a non-empty string of at most 200 characters, got ${typeof subject}`,
    );
  return subject;
}
