import { randomView } from '../core/random-pool';

/** A caller's X-Request-Id is kept when it matches this; otherwise the server makes one (also in openapi.json). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** Request ids: `req_` and 32 hex digits (src/core/random-pool.ts). */
export function newRequestId(): string {
  return `req_${randomView(16).toString('hex')}`;
}
