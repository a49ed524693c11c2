// How page routes answer: HTML with the page headers, 303 redirects, and errors as HTML pages (a person
// is reading, not a program), never the JSON envelope.
import { maxHeaderSize } from 'node:http';
import type { Context } from 'koa';
import { loadUserById } from '../../commands/oauth/user-handler';
import type { UserState } from '../../commands/oauth/users';
import { ApiError } from '../core/errors';
import type { RouteResult } from '../http/route';
import type { Runtime } from '../runtime';
import { type PagePolicy, pageHeaders } from './headers';
import { messagePage } from './pages/oauth-pages';
import { endSession, getSession, passwordTag, type Session } from './sessions';

export const page = (body: string, policy: PagePolicy = {}, status = 200): RouteResult => ({
  status,
  headers: pageHeaders(policy),
  body,
});

export const seeOther = (location: string): RouteResult => ({
  status: 303,
  headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
});

const BACK_TO_DASHBOARD = { href: '/dashboard', label: 'Back to the dashboard' };

/** A page's 404 with its message as written (the API's notFound() appends "not found" to a noun). */
export const pageNotFound = (message: string) => new ApiError(404, 'RESOURCE_NOT_FOUND', message);

/** The 404 page for an id that does not exist or is another restaurant's (the two are not told apart). */
export const notYours = () =>
  pageNotFound('This page does not exist, or it belongs to a restaurant you do not manage.');

/**
 * The validation envelope's sentences, as a manager reads them on a page: they open a link or send a
 * form, and do not know "query string" or "request body" (the API's words, kept for partners).
 */
const PAGE_WORDS: Record<string, string> = {
  'The query string is invalid': 'The link to this page holds a value the page does not take',
  'The request body is invalid': 'The form sent a value this page does not take',
  'The path is invalid': 'The address of this page holds a value the page does not take',
};

/**
 * An issue's message without the API's JSON quoting of a list of values: `period must be one of
 * "7","30","90"` reads "period must be one of 7, 30 or 90", and a list of one, `refresh must be one
 * of "off"`, reads "refresh must be off".
 */
export const readableIssue = (message: string): string =>
  message
    .replace(/must be one of "([^"]*)"(?![,"])/g, 'must be $1')
    .replace(/"[^"]*"(?:,"[^"]*")+/g, (list) => {
      const values = list.slice(1, -1).split('","');
      return `${values.slice(0, -1).join(', ')} or ${values[values.length - 1]}`;
    });

/** Any error of a page route, as a page (under /dashboard, with the way back to it). */
export function renderPageError(
  err: unknown,
  { requestId, ctx }: { requestId: string; ctx?: Context },
): RouteResult {
  const back = ctx?.path.startsWith('/dashboard') ? BACK_TO_DASHBOARD : null;
  if (err instanceof ApiError && err.status < 500) {
    const title =
      err.status === 429
        ? 'Too many requests'
        : err.status === 404
          ? 'Page not found'
          : 'This request cannot be used';
    // What was wrong (a bad ?period=, a form field): the issues' messages, which never repeat the input.
    const issues = Array.isArray(err.details?.issues)
      ? (err.details.issues as { message?: unknown }[])
          .map((i) => i.message)
          .filter((m): m is string => typeof m === 'string')
          .map(readableIssue)
      : [];
    const words = PAGE_WORDS[err.message];
    const message = words ? `${words}${issues.length ? ':' : '.'}` : err.message;
    return page(messagePage({ title, message, issues, back }), {}, err.status);
  }
  // A 503 (storage full, too many bodies arriving at once) stays one, with its retry-after: browsers
  // and monitors then know it is passing, and nothing was done.
  return page(
    messagePage({
      title: 'Something went wrong',
      message: `Couvert could not complete this request. Try again in a moment; if it keeps failing, give support this reference: ${requestId}.`,
      back,
    }),
    {},
    err instanceof ApiError && err.status === 503 ? 503 : 500,
  );
}

export interface SignedIn {
  session: Session;
  user: UserState & { user_id: string; email: string };
  account: { email: string; csrf: string };
}

/**
 * The signed-in person, or null: a session whose user no longer exists, or whose password has changed
 * since it was signed in, is ended.
 */
export async function signedIn(rt: Runtime, ctx: Context): Promise<SignedIn | null> {
  const session = await getSession(rt, ctx);
  if (!session?.doc.user_id) return null;
  const user = await loadUserById(rt, session.doc.user_id);
  if (!user.user_id || !user.email || session.doc.password_tag !== passwordTag(user.password_hash)) {
    await endSession(rt, ctx, session);
    return null;
  }
  return {
    session,
    user: user as SignedIn['user'],
    account: { email: user.email, csrf: session.doc.csrf },
  };
}

/**
 * The longest authorization request (the query string of GET /oauth/authorize) the consent forms carry:
 * any the server can receive, whose request head is at most `maxHeaderSize` bytes. A spec-valid request
 * may come near it (a 1,024-character state of non-Latin text is 9,216 characters percent-encoded), and
 * one accepted on the GET must not be refused when the manager signs in or allows.
 */
export const AUTHORIZATION_MAX_LENGTH = maxHeaderSize;
/** The longest next= kept: an authorization request and its path. */
export const NEXT_MAX_LENGTH = AUTHORIZATION_MAX_LENGTH + 100;

/**
 * A local path to go to after signing in: never another origin (no open redirect). It becomes a
 * Location header, which carries ASCII only: other characters (a link's decoded é or €, a control
 * character) go percent-encoded as UTF-8, as a browser sends them, instead of failing the response.
 * A backslash in the query is encoded too (`%5C`, the same value to a query's reader): a browser leaves
 * it raw in a link's query (an authorization request's state), and refusing it sent the manager to the
 * dashboard instead of the consent. In the path it is refused (`/\evil` would read as `//evil`).
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > NEXT_MAX_LENGTH) return '/dashboard';
  if (!/^\/(oauth\/authorize\?|dashboard(\/|\?|$))/.test(next)) return '/dashboard';
  const query = next.indexOf('?');
  const path = query < 0 ? next : next.slice(0, query);
  if (/[\\\s]/.test(path) || /\s/.test(next) || next.startsWith('//')) return '/dashboard';
  return next.replace(/[^\x21-\x5b\x5d-\x7e]+/g, (s) =>
    [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}
