// The KeyStore port: one secret key per data subject (a customer), kept outside the event log, so
// that destroying the key makes the personal data sealed with it unreadable everywhere the log goes
// (crypto-shredding, docs/AUDIT.md). Adapters: memory (tests), SQLite (embedded: a file beside the
// log), MongoDB (scaled out: a database of its own). All pass test/contracts/key-store.contract.ts.
//
// Key pages: createPage makes a batch of keys in ONE row (SQLite) or document (MongoDB), so a batch
// costs one small durable write whatever its size. A key of a page is the subject
// `key:<page>.<slot>` (pageKeySubject) and answers find/findMany/obtain/destroy like any subject;
// destroying it overwrites its slot in the page (the other slots stay) and the key is gone for good.
// Subjects of the earlier layout (one row per subject, `key:<kid>` included) are read as before.
import { randomBytes } from 'node:crypto';

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
   * A page subject (pageKeySubject) answers its slot's key; one that was never made is refused
   * (KeyStoreError): only createPage makes those.
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
   * `count` (1…MAX_PAGE_KEYS) fresh keys in one page, written in one durable write (one row, one
   * fsync; one document on MongoDB) before this resolves. Key `i` is the subject
   * pageKeySubject(page, i). obtain never makes a key at a page subject: a slot is made here only.
   */
  createPage(count: number): Promise<KeyPage>;
  /**
   * Destroys the key for good and leaves a tombstone (so no new key is ever made for the subject).
   * Idempotent; answers true when a key was destroyed by this call.
   */
  destroy(subject: string, at: string): Promise<boolean>;
  /**
   * Links: a label's members, kept beside the keys so that an index which must vanish with an erasure
   * never reaches the log (a missed call's number → the keys that seal it: src/privacy/number-keys.ts).
   * `link` records `member` under `label`, durable before it resolves (idempotent);
   * `linked` answers the label's members (empty when none); `unlink` deletes the label and every member
   * for good — no tombstone, nothing of the label left (SQLite: secure_delete and a WAL checkpoint) —
   * and answers how many members it deleted. Labels and members: 1 to 200 characters.
   */
  link(label: string, member: string): Promise<void>;
  linked(label: string): Promise<string[]>;
  unlink(label: string): Promise<number>;
  close(): Promise<void>;
}

export interface KeyPage {
  /** The page's id (newPageId): the time first, so pages sort in the order they were made. */
  page: string;
  /** The page's keys, 32 bytes each, slot i at index i. */
  keys: Buffer[];
}

/** The most keys one page holds (a page of 1,024 is a 32 KB row). */
export const MAX_PAGE_KEYS = 1024;

/**
 * A page id: the time in base 36 (9 characters, fixed width: later pages sort after earlier ones, so
 * a store's index takes each at its right edge) and 96 random bits (16 base64url characters: unique
 * across processes).
 */
export function newPageId(): string {
  return Date.now().toString(36).padStart(9, '0') + randomBytes(12).toString('base64url');
}

/** The subject of key `slot` of page `page`. */
export const pageKeySubject = (page: string, slot: number): string => `key:${page}.${slot}`;

/** The kid of a page's key in a v2 box: `<page>.<slot>`, so its subject is `key:<page>.<slot>`. */
export const pageKid = (page: string, slot: number): string => `${page}.${slot}`;

const PAGE_SUBJECT = /^key:([0-9a-z]{9}[A-Za-z0-9_-]{16})\.(0|[1-9][0-9]{0,3})$/;

/**
 * The page and slot a subject names, or null for a subject of the per-subject layout (no subject
 * of that layout has this form: pool keys were `key:<25 characters>`, without a dot).
 */
export function parsePageKeySubject(subject: string): { page: string; slot: number } | null {
  const m = PAGE_SUBJECT.exec(subject);
  if (m === null) return null;
  const slot = Number(m[2]);
  return slot < MAX_PAGE_KEYS ? { page: m[1] as string, slot } : null;
}

/** Refuses a page size out of 1…MAX_PAGE_KEYS. */
export function validatePageSize(count: unknown): number {
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_PAGE_KEYS)
    throw new KeyStoreError(`a key page holds 1 to ${MAX_PAGE_KEYS} keys, got ${String(count)}`);
  return count;
}

export class KeyStoreError extends Error {
  override name = 'KeyStoreError';
}

/** A new page of `count` fresh random keys (checked), before any adapter stores it. */
export function freshKeyPage(count: unknown): KeyPage {
  const n = validatePageSize(count);
  const fresh = randomBytes(32 * n);
  // Each key is its own copy; the block they came from is wiped rather than left to the collector.
  const keys = Array.from({ length: n }, (_, i) => Buffer.from(fresh.subarray(32 * i, 32 * i + 32)));
  fresh.fill(0);
  return { page: newPageId(), keys };
}

/** obtain's answer for a page subject (a page key is never created by obtain): null once destroyed. */
export function pagedKeyAnswer(subject: string, found: KeyLookup): Buffer | null {
  if (found.state === 'none') throw new KeyStoreError(`no key page holds ${subject} (createPage makes them)`);
  return found.state === 'active' ? found.key : null;
}

export class KeyDestroyedError extends KeyStoreError {
  override name = 'KeyDestroyedError';
  constructor(readonly subject: string) {
    super(`the key of ${subject} was destroyed (erased)`);
  }
}

/** Refuses a link's label or member that is not a string of 1 to 200 characters. */
export function validateLinkPart(value: unknown, what: 'label' | 'member'): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200)
    throw new KeyStoreError(`a link's ${what} is a non-empty string of at most 200 characters`);
  return value;
}

export function validateSubject(subject: unknown): string {
  if (typeof subject !== 'string' || subject.length === 0 || subject.length > 200)
    throw new KeyStoreError(
      `a key subject is a non-empty string of at most 200 characters, got ${typeof subject}`,
    );
  return subject;
}
