// Sealing personal data inside events (crypto-shredding, docs/AUDIT.md). Pure apart from the random
// IV: `sealData` takes the personal fields out of an event's data and puts them, encrypted with the
// customer's key (AES-256-GCM), into `data.sealed`; `openData` puts them back, or, when the key was
// destroyed, puts back erased values and marks the event `erased: true`.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Which objects of which customer events hold personal fields. "" is the data itself. */
const CONTAINERS: Record<string, readonly string[]> = {
  CustomerCreated: ['profile'],
  CustomerUpdated: ['changes', 'previous'],
  CustomerMerged: ['changes', 'previous'],
  CustomerBlacklisted: [''],
  CustomerDeleted: [''],
  MarketingOptOutAdded: [''],
};

/** Personal fields (in a profile, or free text about the person) and what they read as once erased. */
const ERASED: Record<string, unknown> = {
  name: '[erased]',
  email: null,
  phone_number: null,
  note: null,
  custom_fields: {},
  reason: null,
};
/** Fields a container of the data itself ("") may hold that are personal. */
const TOP_LEVEL = new Set(['reason']);

export const SEALED_EVENT_TYPES: readonly string[] = Object.keys(CONTAINERS);
export const SEAL_VERSION = 1;

export interface Sealed {
  v: number;
  /** The dotted paths taken out of the data, in the order of the encrypted values. */
  paths: string[];
  /** base64 of IV (12 bytes) | GCM tag (16 bytes) | ciphertext of JSON.stringify(values). */
  box: string;
}

/** The key subject of a customer (the KeyStore's subject name). */
export const customerSubject = (customerId: string) => `customer:${customerId}`;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The customer whose key seals this event, or null when the event holds nothing personal. */
export function sealSubject(type: string, data: Record<string, unknown>): string | null {
  if (!(type in CONTAINERS) || typeof data.customer_id !== 'string' || 'sealed' in data) return null;
  return customerSubject(data.customer_id);
}

/** The personal fields present in the event, as [path, value]. */
function personal(type: string, data: Record<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const container of CONTAINERS[type] ?? []) {
    const obj = container === '' ? data : data[container];
    if (!isObject(obj)) continue;
    for (const field of Object.keys(obj)) {
      if (!(field in ERASED) || (container === '' && !TOP_LEVEL.has(field))) continue;
      if (obj[field] === undefined) continue;
      out.push([container === '' ? field : `${container}.${field}`, obj[field]]);
    }
  }
  return out;
}

const aad = (type: string, customerId: string) => Buffer.from(`couvert-seal-v1\n${type}\n${customerId}`);

/**
 * The data with its personal fields sealed (a new object; the input is not changed), or the data
 * itself when there is nothing to seal. `key` null: the customer was erased, so nothing personal
 * is written at all (the fields are stored erased).
 */
export function sealData(
  type: string,
  data: Record<string, unknown>,
  key: Buffer | null,
): Record<string, unknown> {
  const fields = personal(type, data);
  if (fields.length === 0 || typeof data.customer_id !== 'string') return data;
  const out = structuredClone(data);
  for (const [path] of fields) {
    const [a, b] = path.split('.') as [string, string | undefined];
    if (b === undefined) delete out[a];
    else delete (out[a] as Record<string, unknown>)[b];
  }
  if (key === null) {
    restore(
      out,
      fields.map(([p]) => p),
      null,
    );
    out.erased = true;
    return out;
  }
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(type, data.customer_id));
  const body = Buffer.concat([cipher.update(JSON.stringify(fields.map(([, v]) => v))), cipher.final()]);
  const sealed: Sealed = {
    v: SEAL_VERSION,
    paths: fields.map(([p]) => p),
    box: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64'),
  };
  out.sealed = sealed;
  return out;
}

function restore(data: Record<string, unknown>, paths: string[], values: unknown[] | null): void {
  paths.forEach((path, i) => {
    const [a, b] = path.split('.') as [string, string | undefined];
    const field = b ?? a;
    const value = values === null ? structuredClone(ERASED[field] ?? null) : values[i];
    if (b === undefined) data[a] = value;
    else if (isObject(data[a])) (data[a] as Record<string, unknown>)[b] = value;
  });
}

export function isSealed(
  data: Record<string, unknown>,
): data is Record<string, unknown> & { sealed: Sealed } {
  const s = data.sealed;
  return isObject(s) && s.v === SEAL_VERSION && Array.isArray(s.paths) && typeof s.box === 'string';
}

export class SealError extends Error {
  override name = 'SealError';
}

/**
 * The data as it was written, personal fields back in place; with `key` null (destroyed), the
 * personal fields read as erased and `erased: true` is set. Data that was never sealed is returned
 * as it is.
 */
export function openData(
  type: string,
  data: Record<string, unknown>,
  key: Buffer | null,
): Record<string, unknown> {
  if (!isSealed(data)) return data;
  const { sealed, ...rest } = data;
  if (key === null) {
    restore(rest, sealed.paths, null);
    rest.erased = true;
    return rest;
  }
  const raw = Buffer.from(sealed.box, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(aad(type, String(data.customer_id)));
    decipher.setAuthTag(raw.subarray(12, 28));
    const values = JSON.parse(
      Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString(),
    ) as unknown[];
    restore(rest, sealed.paths, values);
    return rest;
  } catch (err) {
    throw new SealError(
      `the sealed fields of a ${type} of ${String(data.customer_id)} do not open with its key: ${(err as Error).message}`,
    );
  }
}
