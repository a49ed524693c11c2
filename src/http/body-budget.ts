// Bytes of request bodies held while they arrive, bounded. A body is held in memory while it arrives
// (up to BODY_LIMIT_BYTES): without a bound, anyone could open connections to a route that reads a
// body before any credential is checked (POST /sign-in, the OAuth token endpoint, the consent forms),
// send all of a large body but its last byte, and keep it there (200 such connections held 230 MB).
// What counts is the bytes that have actually arrived, charged chunk by chunk and given back once the
// body is read, refused, cut or late (BODY_TIMEOUT_MS: body-deadline.ts). Counting what a body
// declares instead (its Content-Length) let headers alone reserve the whole bound at no cost: 16
// addresses × 16 connections of headers kept every other client's body out (429) for as long as they
// cared to renew them.
// - Per client (clientKey: an IPv4 address, an IPv6 client's /56): 16 bodies of the largest size. Past
//   it that client is refused (429): one address cannot hold more than this, whatever it declares.
// - In all: a memory safeguard, not a share. Reaching it takes BODIES_IN_ALL bodies' worth of bytes
//   actually sent and kept arriving, so headers alone never do; past it a body is refused with 503.
// Pure bookkeeping: the body reader (body-reader.ts) decides what a refusal answers.
import ipaddr from 'ipaddr.js';

/** Bodies of the largest size one client may have arrived and not yet read, at once. */
export const BODIES_PER_CLIENT = 16;
/** Bodies of the largest size held while arriving, every client together: the memory safeguard. */
export const BODIES_IN_ALL = 256;

export type Refusal = 'client' | 'all';

export interface BodyBudget {
  /** The refusal a new body from `client` meets before any of it is read (a bound already reached). */
  full(client: string): Refusal | null;
  /** Charges `bytes` just arrived for a body from `client`; the refusal when that would pass a bound. */
  take(client: string, bytes: number): Refusal | null;
  /** Gives back what `take` charged (the sum of its successful takes, once the body is done). */
  give(client: string, bytes: number): void;
  /** Bytes held now, by one client or in all (tests, diagnostics). */
  held(client?: string): number;
}

export function createBodyBudget(limitBytes: number): BodyBudget {
  const perClient = BODIES_PER_CLIENT * limitBytes;
  const inAll = BODIES_IN_ALL * limitBytes;
  const byClient = new Map<string, number>();
  let total = 0;
  return {
    full(client) {
      if ((byClient.get(client) ?? 0) >= perClient) return 'client';
      if (total >= inAll) return 'all';
      return null;
    },
    take(client, bytes) {
      const mine = byClient.get(client) ?? 0;
      if (mine + bytes > perClient) return 'client';
      if (total + bytes > inAll) return 'all';
      byClient.set(client, mine + bytes);
      total += bytes;
      return null;
    },
    give(client, bytes) {
      const left = (byClient.get(client) ?? 0) - bytes;
      if (left > 0) byClient.set(client, left);
      else byClient.delete(client);
      total = Math.max(0, total - bytes);
    },
    held: (client) => (client === undefined ? total : (byClient.get(client) ?? 0)),
  };
}

/**
 * Whose bound a body counts against: an IPv4 address, or an IPv6 client's /56. A /64 is one network,
 * but providers commonly delegate a /56 to one customer (RFC 6177), who could otherwise spread over
 * 256 /64s and hold 256 bounds. Several customers sharing a /56 share 16 bodies of the largest size in
 * flight at once, far more than any of them sends; the rate limits keep their own /64 key.
 */
export function clientKey(ip: string): string {
  if (!ip) return 'unknown';
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (addr.kind() === 'ipv4') return addr.toString();
  const v6 = addr as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
  const [a, b, c, d] = v6.parts as number[];
  return `${[a, b, c, (d as number) & 0xff00].map((p) => (p as number).toString(16)).join(':')}::/56`;
}
