// The dashboard's customer import between its steps: an uploaded file, read and checked, waits here
// for the manager to look at its preview and start the import (30 minutes at most, one per user, at
// most MAX_UPLOADS, all within one memory budget: IMPORT_UPLOADS_MAX_BYTES, below). It lives in this
// process's memory: a restart forgets it (the import page says so: upload the file again), and with
// several API processes behind a
// balancer the preview and import steps need sticky sessions. The import history is a read model
// (projections/customer-imports.ts) and "one import at a time" is decided on the write side
// (commands/customer-import/slot.ts); `running` here only lets the progress page of a job started a
// moment ago in this process show before the job's first event, and `started` sends a second click on
// Import (a double click) to the job the first one started.
import { randomBytes } from 'node:crypto';
import type { OnMatch } from '../../commands/customer-import/events';
import { trimOldest } from '../core/bounded-map';
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
/** Uploads let go to make room, remembered a while so their Import button says why. */
const LET_GO_MAX = 256;

/**
 * The memory budget (decision). Every file held for preview counts its bytes (its parsed table takes
 * about three times as much: 27 MB for a 10 MB file of 100,000 rows), and so does every file being
 * read for a preview, from before it is read until it is held or refused. A new file that does not fit
 * lets the oldest previews go, the uploader's own earlier one first (one per user anyway): an upload
 * nobody will import (a closed tab) would otherwise keep every manager of every restaurant from
 * uploading for 30 minutes, while a preview let go costs its manager one upload again, and its Import
 * button says so. Refused instead (never by letting anything go): a file larger than the whole budget,
 * and a file that still does not fit beside the files being read at that moment (try again in a
 * moment). A started import's file is no preview: it left this map when its import was claimed and
 * the import holds it, so nothing here touches a running import's data.
 */
export type Room = { reservation: Reservation } | { refused: 'too_large' | 'busy' };

export interface Reservation {
  bytes: number;
  userId: string;
  done: boolean;
}

/** An upload no longer held: when it went, and whose it was (its page is its owner's only). */
interface Gone {
  at: number;
  userId: string;
  restaurantId: string;
}

/** Per server (runtime): a server that stops forgets its uploads, even when another starts in the same process. */
interface Held {
  uploads: Map<string, Upload>;
  running: Map<string, string>;
  /** Uploads whose import was started: upload id → the job (a second click goes to its progress page). */
  started: Map<string, { jobId: string; userId: string; restaurantId: string; expiresAt: number }>;
  /** Bytes of the files being read for a preview (reserved, not yet held nor refused). */
  reading: number;
  /** Uploads let go to make room for newer ones: id → when, and whose. */
  letGo: Map<string, Gone>;
  /** Uploads replaced by a newer upload of the same user (one waits per user): id → when, and whose. */
  replaced: Map<string, Gone>;
  /** Test-only (`onRunEndWait`): told when `ended` begins waiting for a run still held. */
  endWaitHook?: (restaurantId: string, jobId: string) => void;
}
const held = new WeakMap<object, Held>();
function of(server: object): Held {
  let h = held.get(server);
  if (!h) {
    h = {
      uploads: new Map(),
      running: new Map(),
      started: new Map(),
      reading: 0,
      letGo: new Map(),
      replaced: new Map(),
    };
    held.set(server, h);
  }
  return h;
}

function sweep(uploads: Map<string, Upload>, now: number) {
  for (const [id, u] of uploads) if (u.expiresAt <= now) uploads.delete(id);
}

function heldBytes(uploads: Map<string, Upload>): number {
  let n = 0;
  for (const u of uploads.values()) n += u.bytes;
  return n;
}

const gone = (u: Upload, now: number): Gone => ({ at: now, userId: u.userId, restaurantId: u.restaurantId });

function letGo(h: Held, u: Upload, now: number) {
  h.uploads.delete(u.id);
  h.letGo.set(u.id, gone(u, now));
  trimOldest(h.letGo, LET_GO_MAX);
}

/** The user's earlier upload, replaced by the one they are making (one waits per user). */
function replace(h: Held, u: Upload, now: number) {
  h.uploads.delete(u.id);
  h.replaced.set(u.id, gone(u, now));
  trimOldest(h.replaced, LET_GO_MAX);
}

/**
 * Room for a file of `bytes` about to be read for a preview by `userId`, within `budget` bytes for
 * every held and read file: the oldest previews are let go to make it (the user's own first), or the
 * file is refused (see above). Give the reservation to `keepUpload`, or back with `releaseRoom`.
 */
export function reserveRoom(
  server: object,
  userId: string,
  bytes: number,
  budget: number,
  now: number,
): Room {
  const h = of(server);
  if (bytes > budget) return { refused: 'too_large' };
  sweep(h.uploads, now);
  if (h.reading + bytes > budget) return { refused: 'busy' };
  let used = h.reading + heldBytes(h.uploads);
  const order = [
    ...[...h.uploads.values()].filter((u) => u.userId === userId),
    ...[...h.uploads.values()].filter((u) => u.userId !== userId),
  ];
  for (const u of order) {
    if (used + bytes <= budget) break;
    // The uploader's own earlier preview is replaced by this one anyway (keepUpload): not "let go".
    if (u.userId === userId) replace(h, u, now);
    else letGo(h, u, now);
    used -= u.bytes;
  }
  h.reading += bytes;
  return { reservation: { bytes, userId, done: false } };
}

/** A reserved file that will not be held (refused, or its request failed): its room is free again. */
export function releaseRoom(server: object, r: Reservation): void {
  if (r.done) return;
  r.done = true;
  of(server).reading -= r.bytes;
}

/** Whether this upload was let go to make room for newer ones (rather than expired or unknown). */
export const wasLetGo = (server: object, id: string) => of(server).letGo.has(id);

/** Whether this upload was replaced by a newer upload of the same user (one waits per user). */
export const wasReplaced = (server: object, id: string) => of(server).replaced.has(id);

/**
 * Whether this id is (or was, let go or replaced, or started) an upload of another user, or of another
 * restaurant: its page answers 404 to anyone but its owner, for its restaurant.
 */
export function uploadHeldByOther(server: object, id: string, userId: string, restaurantId: string): boolean {
  const h = of(server);
  const owner = h.uploads.get(id) ?? h.started.get(id) ?? h.letGo.get(id) ?? h.replaced.get(id);
  return !!owner && (owner.userId !== userId || owner.restaurantId !== restaurantId);
}

/**
 * The restaurant a held upload of this user is for, or null (none held, or another user's): the start of
 * an upload named under another of the user's restaurants says whose it is, which tells the user
 * nothing they could not see.
 */
export function uploadRestaurantOfUser(
  server: object,
  id: string,
  userId: string,
  now: number,
): string | null {
  const { uploads } = of(server);
  sweep(uploads, now);
  const u = uploads.get(id);
  return u && u.userId === userId ? u.restaurantId : null;
}

/** Holds the file read under `reservation` (its bytes move from "being read" to "held"). */
export function keepUpload(
  server: object,
  reservation: Reservation,
  u: Omit<Upload, 'id' | 'expiresAt'>,
  now: number,
): Upload {
  const h = of(server);
  const { uploads } = h;
  releaseRoom(server, reservation);
  sweep(uploads, now);
  for (const old of [...uploads.values()]) if (old.userId === u.userId) replace(h, old, now);
  for (const old of [...uploads.values()].slice(0, Math.max(0, uploads.size - MAX_UPLOADS + 1)))
    letGo(h, old, now);
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

/**
 * `before`: what claimUpload returned — an import already running (the reason it could not start)
 * stays known. The upload is held again as the newest (the budget may be passed by it until the next
 * upload makes room: its manager was just told to start it again later).
 */
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
/**
 * Waits (at most `ms`) until this process no longer runs `jobId` for the restaurant: a job that has
 * recorded its failure still ends its run (its caller's clean-up) a moment later. True once it has.
 */
export async function ended(
  server: object,
  restaurantId: string,
  jobId: string,
  ms: number,
): Promise<boolean> {
  const until = Date.now() + ms;
  let told = false;
  while (runningJob(server, restaurantId) === jobId) {
    if (!told) {
      told = true;
      of(server).endWaitHook?.(restaurantId, jobId);
    }
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}
/**
 * TEST ONLY: `hook` is called once each time `ended` begins waiting for a run this process still holds
 * (test/e2e/dashboard-import-resume: the run is let go from there, so a resume that did not wait for it
 * is seen). Nothing calls it in the service; unset, `ended` pays one property read per wait. `undefined`
 * removes it.
 */
export function onRunEndWait(
  server: object,
  hook: ((restaurantId: string, jobId: string) => void) | undefined,
): void {
  of(server).endWaitHook = hook;
}

export const markDone = (server: object, restaurantId: string, jobId: string) => {
  const { running } = of(server);
  if (running.get(restaurantId) === jobId) running.delete(restaurantId);
};

/**
 * A resumed job runs in this process (the job page's resume): answers false, changing nothing, when
 * this process already runs an import for the restaurant (a second click on Resume, say).
 */
export function markResumed(server: object, restaurantId: string, jobId: string): boolean {
  const { running } = of(server);
  if (running.has(restaurantId)) return false;
  running.set(restaurantId, jobId);
  return true;
}
