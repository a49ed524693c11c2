// Connection strings (EVENTSTORE_URL, MONGODB_URL) may carry a user name and password before the host:
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
