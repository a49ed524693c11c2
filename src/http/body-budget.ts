// Bodies being received at once, bounded. A body is held in memory while it arrives (up to
// BODY_LIMIT_BYTES), and Node gives a request 5 minutes to arrive whole: without a bound, anyone could
// open connections to a route that reads a body before any credential is checked (POST /sign-in, the
// OAuth token endpoint, the consent forms), send all of a large body but its last byte, and keep it
// there (200 such connections held 230 MB; nothing stopped thousands). Each body reserves what it may
// hold (its Content-Length, or the limit when it is chunked or compressed) before it is read, per
// client address (an IPv6 client's /64: guessingKey) and in all, and gives it back once read, refused,
// cut, or late: a body has BODY_TIMEOUT_MS to arrive (body-deadline.ts), so a place is held that long
// at most, not Node's 5 minutes. Pure bookkeeping: the server decides what a refusal answers.

/** Bodies of the largest size one client address may be sending at once. */
export const BODIES_PER_CLIENT = 16;
/** Bodies of the largest size the server receives at once, every client together. */
export const BODIES_IN_ALL = 256;

export type Refusal = 'client' | 'all';

export interface BodyBudget {
  /** Reserves `bytes` for a body from `client`; the refusal when that would pass a bound. */
  take(client: string, bytes: number): Refusal | null;
  /** Gives back what `take` reserved (once per successful take). */
  give(client: string, bytes: number): void;
  /** Bytes reserved now, by one client or in all (tests, diagnostics). */
  held(client?: string): number;
}

export function createBodyBudget(limitBytes: number): BodyBudget {
  const perClient = BODIES_PER_CLIENT * limitBytes;
  const inAll = BODIES_IN_ALL * limitBytes;
  const byClient = new Map<string, number>();
  let total = 0;
  return {
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
 * What a body may hold once read: its Content-Length when it declares one and is not compressed (a
 * compressed body is counted decompressed, up to the limit), else the limit; never more than the limit
 * (a longer one is refused 413 by the parser).
 */
export function bodyReservation(
  contentLength: string | undefined,
  contentEncoding: string | undefined,
  limitBytes: number,
): number {
  const coding = contentEncoding?.trim().toLowerCase();
  if (coding && coding !== 'identity') return limitBytes;
  if (contentLength === undefined || !/^\d+$/.test(contentLength)) return limitBytes;
  return Math.min(Number(contentLength), limitBytes);
}
