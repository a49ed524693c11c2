// Service-Signature (DESIGN.md §3): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`,
// keyed with the whole secret string (whsec_ included) — the scheme Stripe's libraries verify. During
// a rotation's grace period the header carries one v1= per secret, the new secret's first.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export const generateSigningSecret = () => `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;

export function signPayload(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secrets: readonly string[], timestamp: number, body: string): string {
  return [`t=${timestamp}`, ...secrets.map((s) => `v1=${signPayload(s, timestamp, body)}`)].join(',');
}
