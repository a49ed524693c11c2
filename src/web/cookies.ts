// The cookies of the web pages (the session's, the sign-in device's): their names, how a request's are
// read and how they are set, in one place so that both keep the same rules.
import type { Context } from 'koa';
import { publishedOverHttps } from '../http/transport-security';
import type { Runtime } from '../runtime';

/**
 * Over https a cookie is `Secure` and `__Host-` prefixed (the browser then refuses one set by a
 * sibling host or over http); a local http server could not set such a cookie at all.
 */
export const secureCookies = (rt: Runtime) => publishedOverHttps(rt.config.baseUrl);

export const hostCookieName = (rt: Runtime, name: string) => (secureCookies(rt) ? `__Host-${name}` : name);

/** The value of the request's cookie `name` (the first one), else null. */
export function readCookie(ctx: Context, name: string): string | null {
  const header = ctx.get('cookie');
  if (!header) return null;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}

/** Appends a Set-Cookie for the whole site, never readable by scripts (a max age of 0 removes it). */
export function setCookie(
  rt: Runtime,
  ctx: Context,
  name: string,
  value: string,
  options: { maxAgeSeconds: number; sameSite: 'Lax' | 'Strict' },
): void {
  const attrs = [
    `${name}=${value}`,
    'Path=/',
    'HttpOnly',
    `SameSite=${options.sameSite}`,
    `Max-Age=${options.maxAgeSeconds}`,
    ...(secureCookies(rt) ? ['Secure'] : []),
  ];
  ctx.append('set-cookie', attrs.join('; '));
}
