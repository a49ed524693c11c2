import { randomFillSync } from 'node:crypto';

/** A caller's X-Request-Id is kept when it matches this; otherwise the server makes one (also in openapi.json). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** Request ids: `req_` and 32 hex digits from a pool of random bytes refilled 256 ids at a time. */
const ID_BYTES = 16;
const pool = Buffer.alloc(ID_BYTES * 256);
let poolOffset = pool.length;

export function newRequestId(): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const id = `req_${pool.toString('hex', poolOffset, poolOffset + ID_BYTES)}`;
  poolOffset += ID_BYTES;
  return id;
}
