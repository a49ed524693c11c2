// URLs as text. Connection strings (EVENTSTORE_URL, MONGODB_URL) may carry a user name and password before the host:
// every message naming one (a configuration error, a store that cannot be reached) masks them.

/**
 * The value with its userinfo (user:password@) replaced by `***@`, for error messages. Works on
 * strings that are not valid URLs too (everything between `://` and the last `@` is hidden), since
 * a malformed connection string is exactly the one an operator pastes into a bug report.
 */
export function maskCredentials(raw: string): string {
  const scheme = raw.indexOf('://');
  const from = scheme === -1 ? 0 : scheme + 3;
  const at = raw.lastIndexOf('@');
  return at < from ? raw : `${raw.slice(0, from)}***@${raw.slice(at + 1)}`;
}

/**
 * A space or an ASCII control character (U+0000 to U+0020, U+007F) anywhere in the text. The URL
 * parser drops tabs and line breaks anywhere and spaces and controls at either end, so a URL holding
 * one is shown as given and used as another ("https://good.example\t.other.example/" goes to
 * good.example.other.example): such URLs are refused when saved (webhook targets, OAuth
 * applications' redirect URIs and logos).
 */
export function hasSpaceOrControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return true;
  }
  return false;
}

export const SPACE_OR_CONTROL_PROBLEM =
  'must not contain spaces, tabs, line breaks or control characters (percent-encode them)';

/**
 * Whether a URL's host (`URL.hostname`) can be named in a Content-Security-Policy source list: labels of
 * letters, digits and `-` separated by dots (CSP's host-char), which IPv4 addresses are too. The URL
 * parser keeps `;`, `,`, `'`, `*` and other characters in a host, and a consent page names the redirect's
 * and the logo's origins in its CSP: `;` there ends the directive and starts another of the host's
 * choosing, `,` starts a second policy. An IPv6 literal (`[::1]`) is not one either (no brackets in the
 * grammar).
 */
export const isCspHost = (hostname: string): boolean => /^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(hostname);

export const CSP_HOST_PROBLEM =
  "has a host that is not letters, digits, '-' and '.' (a host name holding ; , ' * or the like cannot be named in the consent page's Content-Security-Policy)";
