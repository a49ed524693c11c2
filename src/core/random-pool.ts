// Random bytes for ids, IVs and request ids, from one pool refilled from the CSPRNG 4 KiB at a time.
// Each call into Node's CSPRNG costs far more than its bytes (randomBytes(12) took 7.2 µs a call on
// this machine, a system call each; randomUUID, which pools the same way inside Node, 0.5 µs), and
// these callers draw 12 or 16 bytes at a time, several per request. Every byte is handed out once.
import { randomFillSync } from 'node:crypto';

const POOL = Buffer.alloc(4096);
let offset = POOL.length;

/** The most bytes one call may take. */
export const MAX_RANDOM_VIEW = 256;

/**
 * `n` fresh random bytes: a view into the pool, valid until the next call (read or copy them at
 * once, synchronously). The caller may write into it.
 */
export function randomView(n: number): Buffer {
  if (!Number.isInteger(n) || n < 1 || n > MAX_RANDOM_VIEW)
    throw new RangeError(`randomView takes 1 to ${MAX_RANDOM_VIEW} bytes, not ${n}`);
  if (offset + n > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  const view = POOL.subarray(offset, offset + n);
  offset += n;
  return view;
}
