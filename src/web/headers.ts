// Headers of every page: a strict Content-Security-Policy (no inline script or style, nothing from
// another origin but what the page names), no framing (frame-ancestors 'none' and X-Frame-Options:
// DENY against clickjacking), no caching, no referrer.
import { isCspHost } from '../core/urls';

export interface PagePolicy {
  /** Origins a form on the page may end up at (a consent form's redirect back to the application). */
  formTargets?: string[];
  /** Origins images come from (an application's logo). */
  imageOrigins?: string[];
  /** The page runs its own script file (/assets) and fetches from its origin (the import progress). */
  scripts?: boolean;
}

export function pageHeaders(p: PagePolicy = {}): Record<string, string> {
  const csp = [
    "default-src 'none'",
    "style-src 'self'",
    `img-src 'self'${(p.imageOrigins ?? []).map((o) => ` ${o}`).join('')}`,
    `form-action 'self'${(p.formTargets ?? []).map((o) => ` ${o}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
    ...(p.scripts ? ["script-src 'self'", "connect-src 'self'"] : []),
  ].join('; ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  };
}

/**
 * The origin of an absolute URL, for a CSP source list; null when it has none (never a wildcard). A host
 * that is an IPv6 literal (`http://[::1]:8080`, a loopback redirect URI RFC 8252 §7.3 allows) cannot be
 * written in a CSP source list (its grammar has no brackets: browsers drop such a source, so a consent
 * form's redirect there was blocked): its scheme stands for it (`http:`), the narrowest source that
 * matches it.
 */
export function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (u.origin === 'null' || !/^[a-z][a-z0-9+.-]*:$/.test(u.protocol)) return null;
    // A host CSP's grammar cannot hold (`;` or `,` would end the directive or the policy, and whatever
    // follows would be read as the host's own directives: registration refuses such hosts, but one may
    // be stored from before): its scheme stands for it too, never its text.
    return isCspHost(u.hostname) ? u.origin : u.protocol;
  } catch {
    return null;
  }
}
