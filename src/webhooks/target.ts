// Where a webhook may be sent (SSRF rules). Addresses are classified with ipaddr.js: only `unicast`
// (public) IPv4 and IPv6 addresses are allowed, IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the
// IPv4 address it carries. The rule is checked twice: on the URL when an endpoint is saved (literal
// addresses, localhost names, the scheme), and on every attempt against each address the name
// resolves to, inside the socket's own lookup, so the connection uses exactly the address checked
// (a name that re-resolves to 127.0.0.1 later — DNS rebinding — is caught at that attempt); the
// URL's own rules are checked again on every attempt too (a literal address never reaches the lookup).
// WEBHOOK_ALLOW_PRIVATE_TARGETS=true lifts both the address rule and the https rule (tests, local
// development): http is accepted only when private targets are.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { charCount } from '../core/text';

export const MAX_URL_LENGTH = 2048;

/** 2000::/3, the only IPv6 space allocated for global unicast (IANA). */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True when the address is a public unicast address (after unwrapping an IPv4-mapped IPv6 address). An
 * IPv6 address must also lie in 2000::/3: ipaddr.js calls everything else it has no name for 'unicast',
 * the IPv4-compatible ::a.b.c.d among them (::127.0.0.1, which a host with an automatic tunnel routes to
 * the IPv4 address inside).
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.range() !== 'unicast') return false;
  return parsed.kind() === 'ipv4' || (parsed as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
}

/** The host of a URL without IPv6 brackets. */
const bare = (hostname: string) => (hostname.startsWith('[') ? hostname.slice(1, -1) : hostname);

/**
 * Why this URL may not be a webhook target, or null. Checks what can be known without a lookup:
 * the scheme, credentials in the URL, a literal address, names that always mean this machine.
 */
export function targetUrlProblem(raw: string, allowPrivate: boolean): string | null {
  // Characters (code points), as the document's maxLength counts them: an emoji is one.
  if (charCount(raw) > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    return allowPrivate ? 'must be an https:// or http:// URL' : 'must be an https:// URL';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not carry a fragment (#…)';
  const host = bare(url.hostname);
  if (!host) return 'must name a host';
  if (allowPrivate) return null;
  if (ipaddr.isValid(host))
    return isPublicAddress(host) ? null : 'must not target a private, loopback or reserved address';
  // WHATWG URL parsing already turned decimal/octal/hex IPv4 spellings (http://2130706433/) into dotted form.
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost') || !name.includes('.'))
    return 'must name a public host (not localhost or a single-label name)';
  return null;
}

export class BlockedTargetError extends Error {
  override name = 'BlockedTargetError';
  readonly code = 'EBLOCKEDTARGET';
}

type Resolver = (
  hostname: string,
  cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemResolver: Resolver = (hostname, cb) => dnsLookup(hostname, { all: true, verbatim: true }, cb);

/**
 * A `lookup` for node:http(s) that resolves the name, refuses the connection when any address is not
 * public (unless private targets are allowed), and hands the socket exactly the addresses it checked.
 * Node never calls it for a literal IP in the URL (it connects to the address as given): the attempt
 * checks such a URL with `targetUrlProblem` first (deliver.ts).
 */
export function guardedLookup(allowPrivate: boolean, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    const host = bare(hostname);
    const done = (err: NodeJS.ErrnoException | null, list: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!list.length)
        return callback(Object.assign(new Error(`${host} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if (!allowPrivate) {
        const bad = list.find((a) => !isPublicAddress(a.address));
        if (bad)
          return callback(
            new BlockedTargetError(`${host} resolves to a non-public address (${bad.address})`),
            '',
            0,
          );
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0] as LookupAddress;
      callback(null, first.address, first.family);
    };
    if (ipaddr.isValid(host)) return done(null, [{ address: host, family: host.includes(':') ? 6 : 4 }]);
    resolver(host, done);
  };
}
