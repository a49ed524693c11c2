import { randomFillSync } from 'node:crypto';

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
