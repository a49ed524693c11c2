// The dashboard's customer import between its steps: an uploaded file, read and checked, waits here
// for the manager to look at its preview and start the import (30 minutes at most, one per user, a
// few in all: the memory they take is bounded). It lives in this process's memory: a restart forgets
// it (the import page says so: upload the file again), and with several API processes behind a
// balancer the preview and import steps need sticky sessions. The import history is a read model
// (projections/customer-imports.ts) and "one import at a time" is decided on the write side
// (commands/customer-import/slot.ts); `running` here only lets the progress page of a job started a
// moment ago in this process show before the job's first event, and `started` sends a second click on
// Import (a double click) to the job the first one started.
import { randomBytes } from 'node:crypto';
import type { OnMatch } from '../../commands/customer-import/events';
import type { PreparedImport } from '../customer-import/engine';

export interface Upload {
  id: string;
  restaurantId: string;
  userId: string;
  fileName: string;
  bytes: number;
  onMatch: OnMatch;
  prepared: PreparedImport;
  expiresAt: number;
}

const TTL_MS = 30 * 60 * 1000;
const MAX_UPLOADS = 8;

/** Per server (runtime): a server that stops forgets its uploads, even when another starts in the same process. */
interface Held {
  uploads: Map<string, Upload>;
  running: Map<string, string>;
  /** Uploads whose import was started: upload id → the job (a second click goes to its progress page). */
  started: Map<string, { jobId: string; userId: string; restaurantId: string; expiresAt: number }>;
}
const held = new WeakMap<object, Held>();
function of(server: object): Held {
  let h = held.get(server);
  if (!h) {
    h = { uploads: new Map(), running: new Map(), started: new Map() };
    held.set(server, h);
  }
  return h;
}

function sweep(uploads: Map<string, Upload>, now: number) {
  for (const [id, u] of uploads) if (u.expiresAt <= now) uploads.delete(id);
}

export function keepUpload(server: object, u: Omit<Upload, 'id' | 'expiresAt'>, now: number): Upload {
  const { uploads } = of(server);
  sweep(uploads, now);
  for (const [id, old] of uploads) if (old.userId === u.userId) uploads.delete(id);
  while (uploads.size >= MAX_UPLOADS) {
    const oldest = uploads.keys().next().value as string;
    uploads.delete(oldest);
  }
  const upload = { ...u, id: randomBytes(18).toString('base64url'), expiresAt: now + TTL_MS };
  uploads.set(upload.id, upload);
  return upload;
}

/** The user's own upload for that restaurant, still there; null otherwise. */
export function findUpload(
  server: object,
  id: string,
  userId: string,
  restaurantId: string,
  now: number,
): Upload | null {
  const { uploads } = of(server);
  sweep(uploads, now);
  const u = uploads.get(id);
  return u && u.userId === userId && u.restaurantId === restaurantId ? u : null;
}

/**
 * Claims an upload for the job about to start, at once (before anything awaits): a second click on
 * Import, even one arriving at the same moment, finds the job instead of the upload. The upload's file
 * is let go; `releaseUpload` puts it back when the job could not start.
 */
/** Returns the job this process had running for the restaurant before (for releaseUpload). */
export function claimUpload(server: object, u: Upload, jobId: string, now: number): string | null {
  const h = of(server);
  const before = h.running.get(u.restaurantId) ?? null;
  h.uploads.delete(u.id);
  for (const [id, s] of h.started) if (s.expiresAt <= now) h.started.delete(id);
  h.started.set(u.id, { jobId, userId: u.userId, restaurantId: u.restaurantId, expiresAt: now + TTL_MS });
  h.running.set(u.restaurantId, jobId);
  return before;
}

/** `before`: what claimUpload returned — an import already running (the reason it could not start) stays known. */
export function releaseUpload(server: object, u: Upload, jobId: string, before: string | null): void {
  const h = of(server);
  h.started.delete(u.id);
  h.uploads.set(u.id, u);
  if (h.running.get(u.restaurantId) !== jobId) return;
  if (before === null) h.running.delete(u.restaurantId);
  else h.running.set(u.restaurantId, before);
}

/** The job started from this upload of the user's, for that restaurant (this process, 30 minutes). */
export function startedJob(server: object, id: string, userId: string, restaurantId: string, now: number) {
  const s = of(server).started.get(id);
  return s && s.userId === userId && s.restaurantId === restaurantId && s.expiresAt > now ? s.jobId : null;
}

/** The job this process started last for the restaurant and is still running, if any. */
export const runningJob = (server: object, restaurantId: string) =>
  of(server).running.get(restaurantId) ?? null;
export const markDone = (server: object, restaurantId: string, jobId: string) => {
  const { running } = of(server);
  if (running.get(restaurantId) === jobId) running.delete(restaurantId);
};
