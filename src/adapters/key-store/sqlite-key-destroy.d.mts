import type Database from 'better-sqlite3';

/** Where a page subject's key is (parsePageKeySubject); null for a subject of its own. */
export type KeyPlace = { page: string; slot: number } | null;

/**
 * The destroy of `db` (a connection to a key file, schema made): one IMMEDIATE transaction, then a
 * WAL checkpoint (TRUNCATE); true when a key was destroyed by it. The row it writes keeps `token`
 * (`destroyed_by`): the calling destroy's own, so that its caller can tell its commit from another's.
 */
export function keyDestroyer(
  db: Database.Database,
): (subject: string, at: string, place: KeyPlace, token: string) => boolean;
