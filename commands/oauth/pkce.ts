// PKCE (RFC 7636), S256 only: the challenge is base64url(SHA-256(verifier)) without padding, 43 characters;
// the verifier is 43 to 128 characters among A-Z a-z 0-9 - . _ ~.
import { createHash, timingSafeEqual } from 'node:crypto';

export const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
export const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export const challengeOf = (verifier: string) =>
  createHash('sha256').update(verifier, 'ascii').digest('base64url');

export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier) || !CHALLENGE.test(challenge)) return false;
  const a = Buffer.from(challengeOf(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
