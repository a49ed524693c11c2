// Passwords are hashed with scrypt (node:crypto): a random 16-byte salt per password and the cost
// parameters stored beside the hash (`scrypt$N$r$p$salt$hash`), so they can be raised later without
// invalidating stored hashes. Parameters: N=2^15, r=8, p=3 (one of OWASP's scrypt settings; 32 MiB).
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

const N = 2 ** 15;
const R = 8;
const P = 3;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...o, maxmem: 256 * o.N * o.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![n, r, p].every((x) => Number.isSafeInteger(x) && x > 0) || n > 2 ** 20 || r > 32 || p > 16)
    return false;
  const expected = Buffer.from(parts[5] as string, 'base64url');
  const key = await derive(password, Buffer.from(parts[4] as string, 'base64url'), { N: n, r, p });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let dummy: Promise<string> | null = null;
/**
 * For an unknown email: the same work as a real check, so the time taken does not tell whether the
 * account exists.
 */
export async function burnPasswordCheck(password: string): Promise<false> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await dummy);
  return false;
}
