// Browser sessions for the sign-in, consent and dashboard pages.
//
// Not events: a session is not a business fact an auditor replays (who signed in is; the grants and
// disconnections a manager makes are events with the manager as actor). So a session is an opaque
// random id (256 bits) in an HttpOnly cookie. A signed-in session is a document in the `web_sessions`
// collection of the DocumentStore, keyed by the id's SHA-256 (reading the store never yields a usable
// cookie), holding its random CSRF token. Embedded, the collection lives in process memory (a restart
// signs everyone out); scaled out it is in MongoDB, shared by every API process. A visitor who has not
// signed in is stored nowhere: the sign-in form's CSRF token is derived from the cookie's id (a hash
// only the holder of the HttpOnly cookie can compute), so page views without a cookie (a crawler, or
// someone filling the store) cost nothing kept, and the cookie's Max-Age bounds it. Signing in always
// starts a new session with a new id (no session fixation).

import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { sha256 } from '../core/ids';
import type { IndexSpec } from '../ports/document-store';
import type { Runtime } from '../runtime';
import { hostCookieName, readCookie, setCookie } from './cookies';

export interface SessionDoc {
  _id: string;
  user_id: string | null;
  email: string | null;
  /** Which password it was signed in with (passwordTag): a new password ends it (signedIn). */
  password_tag?: string;
  csrf: string;
  created_at: string;
  expires_at: string;
  [k: string]: unknown;
}

export interface Session {
  id: string;
  doc: SessionDoc;
}

export const SESSIONS = 'web_sessions';
const ANONYMOUS_TTL_MS = 60 * 60 * 1000;
const SIGNED_IN_TTL_MS = 12 * 60 * 60 * 1000;

export const cookieName = (rt: Runtime) => hostCookieName(rt, 'couvert_session');

const collection = (rt: Runtime) => rt.docs.collection<SessionDoc>(SESSIONS);

/**
 * The sweep's index (`deleteMany` on `expires_at`), asked for once a runtime, before its first session
 * is stored: without it MongoDB scans every process's sessions at each sweep. Not a TTL index: MongoDB
 * expires only BSON dates and the port stores JSON values (`expires_at` is an ISO string), the embedded
 * store has no TTL, and a session past `expires_at` is refused by getSession whenever it is deleted.
 * `embeddedPrefix: 0`: the embedded store's indexes answer no range, so it keeps nothing for it.
 * Sessions are not a read model (no projection, kept by `read-models rebuild`): no version to bump.
 */
export const SESSIONS_SWEEP_INDEX: IndexSpec = {
  keys: { expires_at: 1 },
  name: 'web_sessions_sweep',
  embeddedPrefix: 0,
};
const indexed = new WeakMap<Runtime, Promise<void>>();
const warned = new WeakSet<Runtime>();
/**
 * Never fails a sign-in: without the index the sweep is slower, not wrong. MongoDB refuses it when an
 * operator already made one on `expires_at` with other options or another name (IndexOptionsConflict,
 * every time), so the failure is logged once a runtime, and asked again at the next sign-in (a
 * MongoDB that was not answering may answer then).
 */
function ensureSweepIndex(rt: Runtime): Promise<void> {
  let made = indexed.get(rt);
  if (!made) {
    made = collection(rt)
      .createIndex(SESSIONS_SWEEP_INDEX)
      .catch((err: unknown) => {
        indexed.delete(rt);
        if (warned.has(rt)) return;
        warned.add(rt);
        rt.logger.warn(
          { event: 'sessions_sweep_index_failed', err: err instanceof Error ? err.message : String(err) },
          'web_sessions: the sweep index on expires_at could not be made (sign-ins go on; the sweep scans)',
        );
      });
    indexed.set(rt, made);
  }
  return made;
}

/** The session id the request's cookie carries, when it has the shape of one. */
function sessionId(rt: Runtime, ctx: Context): string | null {
  const v = readCookie(ctx, cookieName(rt));
  return v !== null && /^[A-Za-z0-9_-]{43}$/.test(v) ? v : null;
}

const setSessionCookie = (rt: Runtime, ctx: Context, value: string, maxAgeSeconds: number) =>
  setCookie(rt, ctx, cookieName(rt), value, { maxAgeSeconds, sameSite: 'Lax' });

/** An anonymous session's CSRF token: derived from its id, so nothing is stored for it. */
const anonymousCsrf = (id: string) =>
  createHash('sha256').update(`couvert anonymous csrf:${id}`).digest('base64url');

/** The session of a cookie that names no stored (signed-in) session: an anonymous one, stored nowhere. */
const anonymous = (id: string): Session => ({
  id,
  doc: {
    _id: sha256(id),
    user_id: null,
    email: null,
    csrf: anonymousCsrf(id),
    created_at: '',
    expires_at: '',
  },
});

export async function getSession(rt: Runtime, ctx: Context): Promise<Session | null> {
  const id = sessionId(rt, ctx);
  if (!id) return null;
  const doc = await collection(rt).findOne({ _id: sha256(id) });
  if (!doc) return anonymous(id);
  if (Date.parse(doc.expires_at) <= rt.clock.now().getTime()) {
    await collection(rt).deleteOne({ _id: doc._id });
    return null;
  }
  return { id, doc };
}

/**
 * Names the password a session was signed in with, without keeping its hash in the session store: a
 * password changed since (an operator's reset, most often because the old one leaked) ends the
 * sessions signed in with the old one at their next request.
 */
export const passwordTag = (passwordHash: string | null) =>
  sha256(`couvert session password:${passwordHash ?? ''}`).slice(0, 32);

export interface SignedInUser {
  user_id: string;
  email: string;
  password_hash: string | null;
}

let created = 0;
async function create(rt: Runtime, ctx: Context, user: SignedInUser): Promise<Session> {
  const id = randomBytes(32).toString('base64url');
  const now = rt.clock.now();
  const doc: SessionDoc = {
    _id: sha256(id),
    user_id: user.user_id,
    email: user.email,
    password_tag: passwordTag(user.password_hash),
    csrf: randomBytes(32).toString('base64url'),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + SIGNED_IN_TTL_MS).toISOString(),
  };
  await ensureSweepIndex(rt);
  await collection(rt).insertOne(doc);
  setSessionCookie(rt, ctx, id, Math.floor(SIGNED_IN_TTL_MS / 1000));
  // Expired sessions are swept now and then rather than on a timer.
  if (++created % 100 === 0) await collection(rt).deleteMany({ expires_at: { $lte: now.toISOString() } });
  return { id, doc };
}

/** The current session, or a new anonymous one (for the CSRF token of the sign-in form): a cookie only. */
export async function ensureSession(rt: Runtime, ctx: Context): Promise<Session> {
  const current = await getSession(rt, ctx);
  if (current) return current;
  const id = randomBytes(32).toString('base64url');
  setSessionCookie(rt, ctx, id, Math.floor(ANONYMOUS_TTL_MS / 1000));
  return anonymous(id);
}

/** Signing in: the old session (if any) is deleted and a new id issued (no session fixation). */
export async function startSignedInSession(
  rt: Runtime,
  ctx: Context,
  old: Session | null,
  user: SignedInUser,
): Promise<Session> {
  if (old) await collection(rt).deleteOne({ _id: old.doc._id });
  return create(rt, ctx, user);
}

export async function endSession(rt: Runtime, ctx: Context, session: Session | null): Promise<void> {
  if (session) await collection(rt).deleteOne({ _id: session.doc._id });
  setSessionCookie(rt, ctx, '', 0);
}
