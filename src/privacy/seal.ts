// Sealing personal data inside events (crypto-shredding, docs/AUDIT.md). Pure apart from the random
// IV: `sealData` takes the personal fields out of an event's data and puts them, encrypted with the
// customer's key (AES-256-GCM), into `data.sealed`; `openData` puts them back, or, when the key was
// destroyed, puts back erased values and marks the event `erased: true`. Customer events, the
// reservation events (what the guest wrote) and webhook fan-outs (the bodies sent) are sealed.
// Two box versions, both read forever: v1 is sealed with the key of the customer's subject
// (`customer:<id>`); v2 names the key it was sealed with (`kid`, a key of the sealing layer's pool of
// keys made ahead in durable batches, subject `key:<kid>`), so a new customer costs no key-store write
// of its own (sealing-event-store.ts says why erasure still finds that key).
import { createCipheriv, createDecipheriv, hkdfSync } from 'node:crypto';
import { randomView } from '../core/random-pool';
import { RESERVATION_TEXT, type TextOwnerMap } from './reservation-text-owners';

/**
 * IVs come from the shared pool of random bytes (src/core/random-pool.ts: randomBytes(12) per event
 * was ~10 % of a non-durable append): 96 random bits per IV, drawn once each, are what GCM with
 * random IVs needs either way. A view, valid until the next draw: used at once, synchronously.
 */
const nextIv = (): Buffer => randomView(12);

/** A customer's profile fields that are personal. */
const PROFILE = ['name', 'email', 'phone_number', 'note', 'custom_fields', 'tags'] as const;
/** What a guest (or a partner about the guest) wrote on a reservation. */
const RESERVATION = RESERVATION_TEXT;

/**
 * Which objects ("" is the data itself) of which events hold which personal fields. Customer events
 * are sealed with the key of their `customer_id`; reservation events with the key of the
 * reservation's customer (the sealing layer knows it: src/privacy/sealing-event-store.ts); a webhook
 * fan-out with the key of the customer its bodies describe.
 */
const PERSONAL: Record<string, Record<string, readonly string[]>> = {
  CustomerCreated: { profile: PROFILE },
  CustomerUpdated: { changes: PROFILE, previous: PROFILE },
  CustomerMerged: { changes: PROFILE, previous: PROFILE },
  CustomerBlacklisted: { '': ['reason'] },
  CustomerDeleted: { '': ['reason'] },
  MarketingOptOutAdded: { '': ['reason'] },
  ReservationCreated: { reservation: RESERVATION },
  ReservationUpdated: { changes: RESERVATION, previous: RESERVATION },
  ReservationStatusChanged: { '': ['reason'] },
  ReservationFeedbackRecorded: { feedback: ['comment', 'answer'] },
  WebhookDeliveriesScheduled: { '': ['payloads'] },
  // What the endpoint answered may echo the body (the guest's name in an error page): with the key of
  // the customer the delivery describes (`customer_id`, when it names one).
  WebhookAttemptRecorded: { '': ['response_excerpt'] },
  // Missed calls (commands/missed-calls/events.ts, src/privacy/missed-call-sealing.ts): the caller's
  // number and the message sent, with the key of the call's customer (named in `customer_id`).
  MissedCallReported: { '': ['caller_phone_number'] },
  MessageRequested: { '': ['to', 'text', 'parameters'] },
  MessageSlotTaken: { '': ['caller'] },
  OutboxMessageRecorded: { '': ['to', 'text'], template: ['parameters'] },
};

/** What a personal field reads as once its key is destroyed. */
const ERASED: Record<string, unknown> = {
  name: '[erased]',
  email: null,
  phone_number: null,
  note: null,
  custom_fields: {},
  tags: [],
  reason: null,
  allergies: null,
  custom_message: null,
  metadata: {},
  cancellation_reason: null,
  comment: null,
  answer: null,
  payloads: {},
  response_excerpt: null,
  caller_phone_number: null,
  to: null,
  text: null,
  parameters: [],
  caller: null,
};

/** A customer's personal profile fields as they read once erased (a fresh copy). */
export const erasedProfileFields = (): Record<(typeof PROFILE)[number], unknown> =>
  Object.fromEntries(PROFILE.map((f) => [f, structuredClone(ERASED[f] ?? null)])) as Record<
    (typeof PROFILE)[number],
    unknown
  >;

export const SEALED_EVENT_TYPES: readonly string[] = Object.keys(PERSONAL);
/** Sealed event types whose data names the customer (`customer_id`) whose key seals them. */
export const CUSTOMER_EVENT_TYPES: readonly string[] = SEALED_EVENT_TYPES.filter(
  (t) => t.startsWith('Customer') || t === 'MarketingOptOutAdded',
);
/** Sealed reservation events: their customer is the reservation's (ReservationCreated names it). */
export const RESERVATION_SEALED_TYPES: readonly string[] = SEALED_EVENT_TYPES.filter((t) =>
  t.startsWith('Reservation'),
);
/** The box sealed with the customer's own key (`customer:<id>`). */
export const SEAL_VERSION = 1;
/** The box sealed with a pool key it names (`kid`, subject `key:<kid>`). */
export const SEAL_VERSION_KID = 2;

export interface Sealed {
  /** 1: sealed with the key of `customer:<id>`; 2: with the key of `key:<kid>`. */
  v: number;
  /** v2: the id of the key that sealed it (subject `key:<kid>`); part of the associated data. */
  kid?: string;
  /** The dotted paths taken out of the data, in the order of the encrypted values. */
  paths: string[];
  /**
   * The customer whose key sealed it, when the data does not name them itself (`customer_id`):
   * reservation events after their creation. Part of the associated data, so it cannot be swapped.
   */
  customer_id?: string;
  /** base64 of IV (12 bytes) | GCM tag (16 bytes) | ciphertext of JSON.stringify(values). */
  box: string;
  /**
   * Boxes of other subjects (added 2026-11-27; absent from every row before, which open as they
   * did): what the event holds of customers other than the one this box is sealed for (a
   * reservation's previous customer), each sealed with a key of their own (MoreBox).
   */
  more?: MoreBox[];
}

/**
 * A box of another subject than the event's own (Sealed.more): sealed with a key derived (HKDF-SHA-256)
 * from the keys of `owners` — and of the event's own box too when `joint` (its values also hold the
 * event's own customer's data: a webhook body describing both) —, so destroying any of those keys
 * makes it unreadable. Its paths, once it cannot be opened, read as the event's own box holds them (a
 * stand-in written without the other subject's data: a webhook body with them erased), else erased.
 */
export interface MoreBox {
  v: typeof SEAL_VERSION_MORE;
  /** The other customers (and the pool key sealing for each, if any). Part of the associated data. */
  owners: { customer_id: string; kid?: string }[];
  /** The event's own box's key is part of this box's key. */
  joint?: true;
  paths: string[];
  box: string;
}

/** The version of a MoreBox. */
export const SEAL_VERSION_MORE = 1;

/** A key of a box's owner: the key (null: destroyed) and the pool key's id when it is one. */
export interface OwnerKey {
  customer: string;
  key: Buffer | null;
  kid?: string;
}

/**
 * What an event holds of customers other than the one whose key seals it, beside their data (pure):
 * a reservation's ReservationUpdated that gives it to another customer holds, in `previous`, the text
 * as it was in the previous customer's boxes, where it differs from what the change writes (a
 * restated value is the new customer's: the same in `changes`); a webhook fan-out names the other
 * customers its bodies describe (`other_customer_ids`: a move's previous customer, feedback given
 * under another) and holds, in `payloads_without_others`, the bodies with their data erased. Empty
 * (the common case) when there is none: nothing else is looked at.
 */
export function otherSubjects(
  type: string,
  data: Record<string, unknown>,
  customer: string | null,
  owners?: Readonly<TextOwnerMap>,
): { customers: string[]; paths: string[]; joint: boolean }[] {
  if (type === 'ReservationUpdated') {
    const previous = data.previous;
    if (!isObject(previous)) return [];
    const was = previous.customer_id;
    // Without the owners (a legacy row's read rule): the previous text is the previous customer's.
    if (owners === undefined && (typeof was !== 'string' || was === customer)) return [];
    const changes = isObject(data.changes) ? data.changes : {};
    const byOwner = new Map<string, string[]>();
    for (const f of RESERVATION) {
      const v = previous[f];
      if (isBlank(v)) continue;
      // A restated value is written again in `changes`, sealed with the new customer's key.
      if (Object.hasOwn(changes, f) && JSON.stringify(changes[f]) === JSON.stringify(v)) continue;
      // Whose box held the value before the event: the owners folded from the stream (a reservation
      // detached from its customer keeps their text in their boxes), else the previous customer.
      const owner =
        owners !== undefined && Object.hasOwn(owners, f)
          ? owners[f]
          : typeof was === 'string'
            ? was
            : customer;
      if (typeof owner !== 'string' || owner === customer) continue;
      const list = byOwner.get(owner);
      if (list === undefined) byOwner.set(owner, [`previous.${f}`]);
      else list.push(`previous.${f}`);
    }
    return [...byOwner].map(([c, paths]) => ({ customers: [c], paths, joint: false }));
  }
  if (type === 'WebhookDeliveriesScheduled') {
    const ids = data.other_customer_ids;
    if (!Array.isArray(ids) || ids.length === 0 || !isObject(data.payloads_without_others)) return [];
    const customers = ids.filter((c): c is string => typeof c === 'string' && c !== customer);
    return customers.length === 0 ? [] : [{ customers, paths: ['payloads'], joint: customer !== null }];
  }
  return [];
}

/** Whether a ReservationUpdated (not sealed yet) restates text in `previous` (otherSubjects looks). */
export function hasPreviousText(type: string, data: unknown): boolean {
  if (type !== 'ReservationUpdated' || !isObject(data) || 'sealed' in data || !isObject(data.previous))
    return false;
  const previous = data.previous;
  return RESERVATION.some((f) => !isBlank(previous[f]));
}

/** The field of a fan-out that holds its bodies without the other customers' data (otherSubjects). */
export const STAND_IN = 'payloads_without_others';

/** The key subject of a customer (the KeyStore's subject name). */
export const customerSubject = (customerId: string) => `customer:${customerId}`;
/** The key subject of a pool key named by a v2 box. */
export const kidSubject = (kid: string) => `key:${kid}`;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether events of this type may hold personal fields. */
export const isSealedType = (type: string): boolean => type in PERSONAL;

/**
 * The customer whose key seals this event when its data names them (customer events, a reservation's
 * creation, a webhook fan-out), null when it holds nothing personal or names no customer (then the
 * sealing layer finds the reservation's customer itself).
 */
export function sealCustomer(type: string, data: Record<string, unknown>): string | null {
  if (!(type in PERSONAL) || 'sealed' in data) return null;
  if (typeof data.customer_id === 'string') return data.customer_id;
  if (type === 'ReservationCreated' && isObject(data.reservation)) {
    const c = data.reservation.customer_id;
    return typeof c === 'string' ? c : null;
  }
  return null;
}

/** The customer whose key seals this event, as a key subject (see sealCustomer). */
export function sealSubject(type: string, data: Record<string, unknown>): string | null {
  const customer = sealCustomer(type, data);
  return customer === null ? null : customerSubject(customer);
}

/**
 * Values that say nothing about anyone stay in clear: an event whose personal fields are all blank
 * (most reservation events: no allergies, no message) is not sealed, so reading it costs no key.
 */
const isBlank = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (isObject(v) && Object.keys(v).length === 0);

/** `s` as V8's internalised copy (a property name): flat, its hash kept, compared by pointer. */
const internalised = (s: string): string => Object.keys({ [s]: 0 })[0] as string;

/**
 * Every personal path of PERSONAL split once: dotted path → [object (null for the data itself),
 * field], the strings internalised. personal() hands out these paths and stripped() and restore()
 * split them here, instead of building and slicing new strings for each field of each event.
 */
const PATH_PARTS = new Map<string, readonly [string | null, string]>();
/** PERSONAL with each field's dotted path: type → object → [[field, path]]. */
const PERSONAL_PATHS: Record<string, [string, (readonly [string, string])[]][]> = {};
for (const [type, containers] of Object.entries(PERSONAL)) {
  const list: [string, (readonly [string, string])[]][] = [];
  for (const [container, fields] of Object.entries(containers)) {
    const c = internalised(container);
    const pairs = fields.map((f) => {
      const field = internalised(f);
      const path = c === '' ? field : internalised(`${c}.${field}`);
      PATH_PARTS.set(path, [c === '' ? null : c, field]);
      return [field, path] as const;
    });
    list.push([c, pairs]);
  }
  PERSONAL_PATHS[type] = list;
}

/** A dotted path as [object (null: the data itself), field] (PATH_PARTS; any other path split). */
function splitPath(path: string): readonly [string | null, string] {
  const known = PATH_PARTS.get(path);
  if (known !== undefined) return known;
  const dot = path.indexOf('.');
  return dot === -1 ? [null, path] : [path.slice(0, dot), path.slice(dot + 1)];
}

/** The personal fields present in the event, as [path, value]. */
function personal(type: string, data: Record<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [];
  const containers = PERSONAL_PATHS[type];
  if (containers === undefined || !Object.hasOwn(PERSONAL_PATHS, type)) return out;
  for (const [container, fields] of containers) {
    const obj = container === '' ? data : data[container];
    if (!isObject(obj)) continue;
    // The field list, not the object's keys: a reservation snapshot has forty fields, four personal.
    for (const [field, path] of fields) {
      const v = obj[field];
      if (!isBlank(v)) out.push([path, v]);
    }
  }
  return out;
}

/** Whether the event holds a personal field that sealing would take out. */
export const hasPersonalFields = (type: string, data: Record<string, unknown>): boolean =>
  personal(type, data).length > 0;

const aad = (type: string, customerId: string, kid?: string) =>
  Buffer.from(
    kid === undefined
      ? `couvert-seal-v1\n${type}\n${customerId}`
      : `couvert-seal-v2\n${type}\n${customerId}\n${kid}`,
  );

/** Builds a copy of one shape: the source's kept keys, then (or in place) the added ones. */
type Copier = (obj: Record<string, unknown>, values: readonly unknown[]) => Record<string, unknown>;
/** A copier and the shape it copies (source keys, dropped keys, added keys). */
interface ShapeCopier {
  keys: readonly string[];
  drop: readonly string[];
  add: readonly string[];
  copy: Copier;
}
/**
 * Copiers by how many keys and the last one, each bucket's shapes compared key by key: property
 * names are internalised strings, so that is a few pointer compares where hashing a signature of all
 * the names cost more than the copy. Shapes are the events' own, few.
 */
const COPIERS = new Map<number, Map<string, ShapeCopier[]>>();
let copierCount = 0;
const MAX_COPIERS = 2048;
const sameList = (a: readonly string[], b: readonly string[]): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};
const NO_VALUES: readonly unknown[] = [];

/**
 * A copier for one shape. The copy is built by one object literal naming every property (compiled
 * once per shape; each name is a JSON string literal, so no key can be read as code), so V8 gives
 * every copy of that shape one shared fast map. Copying key by key into `{}` instead (`out[k] = v`)
 * is a keyed store per property, and V8 turns an object that gains more than ~16 properties that way
 * into a slow dictionary-mode object: a reservation snapshot (~40 fields) copied so was slow for
 * every later walk (the read models' clone, evolve, interning, JSON.stringify); a spread copy followed
 * by `delete` is slow too, and a spread copy that then gains properties gets a map of its own each
 * time. A shape with an own `__proto__` key (JSON can hold one) is copied by Object.fromEntries,
 * which keeps it an own property, and so is any shape once MAX_COPIERS are compiled (`compile`).
 */
function copier(
  keys: readonly string[],
  drop: readonly string[],
  add: readonly string[],
  compile = true,
): Copier {
  const kept = keys.filter((k) => !drop.includes(k));
  const extra = add.filter((k) => !kept.includes(k));
  if (!compile || kept.includes('__proto__') || extra.includes('__proto__'))
    return (obj, values) => {
      const entries: [string, unknown][] = kept.map((k) => {
        const i = add.indexOf(k);
        return [k, i === -1 ? obj[k] : values[i]];
      });
      for (const k of extra) entries.push([k, values[add.indexOf(k)]]);
      return Object.fromEntries(entries);
    };
  const q = (k: string) => JSON.stringify(k);
  const props = kept.map((k) => {
    const i = add.indexOf(k);
    return `${q(k)}: ${i === -1 ? `o[${q(k)}]` : `v[${i}]`}`;
  });
  for (const k of extra) props.push(`${q(k)}: v[${add.indexOf(k)}]`);
  return new Function('o', 'v', `return { ${props.join(', ')} };`) as Copier;
}

/**
 * A copy of `obj` without the keys in `drop` and with `values[i]` at `add[i]` (in the place of an
 * existing key, else after the others), in the original order; a fast object (copier, above).
 */
function copyWith(
  obj: Record<string, unknown>,
  drop: readonly string[],
  add: readonly string[] = NOTHING,
  values: readonly unknown[] = NO_VALUES,
): Record<string, unknown> {
  const keys = Object.keys(obj);
  // Property names are internalised strings: a look-up by the last one hashes nothing new (a bucket
  // name built per call was a string to allocate and hash every time).
  const last = keys.length === 0 ? '' : (keys[keys.length - 1] as string);
  let byLast = COPIERS.get(keys.length);
  const shapes = byLast?.get(last);
  if (shapes !== undefined)
    for (const s of shapes)
      if (sameList(s.keys, keys) && sameList(s.drop, drop) && sameList(s.add, add))
        return s.copy(obj, values);
  const copy = copier(keys, drop, add, copierCount < MAX_COPIERS);
  if (copierCount < MAX_COPIERS) {
    copierCount++;
    const entry = { keys, drop: [...drop], add: [...add], copy };
    if (byLast === undefined) {
      byLast = new Map();
      COPIERS.set(keys.length, byLast);
    }
    if (shapes === undefined) byLast.set(last, [entry]);
    else shapes.push(entry);
  }
  return copy(obj, values);
}

/** A copy of `obj` without the keys in `drop`, in the original order (a fast object: copyWith). */
function without(obj: Record<string, unknown>, drop: readonly string[]): Record<string, unknown> {
  return copyWith(obj, drop);
}

/** The personal fields an event holds, as [dotted path, value] (empty: nothing to seal). */
export const personalFields = (type: string, data: Record<string, unknown>): [string, unknown][] =>
  personal(type, data);

/** A box sealed by sealFields, with the JSON of the values sealed in it (for openPlain). */
export interface SealedBox {
  data: Record<string, unknown>;
  box: string;
  plaintext: string;
}

/**
 * The data with its personal fields taken out: the copy sealData and sealFields start from (objects
 * the fields are taken from are copied, the rest is shared, as it is never changed).
 */
function stripped(
  data: Record<string, unknown>,
  fields: readonly [string, unknown][],
): Record<string, unknown> {
  const top: string[] = [];
  const nested = new Map<string, string[]>();
  for (const [path] of fields) {
    const [a, field] = splitPath(path);
    if (a === null) top.push(field);
    else {
      const list = nested.get(a);
      if (list === undefined) nested.set(a, [field]);
      else list.push(field);
    }
  }
  const out = without(data, top);
  for (const [a, drop] of nested) out[a] = without(data[a] as Record<string, unknown>, drop);
  return out;
}

/**
 * sealData with the personal fields already found (personalFields, not empty) and a key: the sealed
 * data, its box and the plaintext sealed in it, so the caller can open its own box without
 * decrypting (openPlain). The sealing layer's path: the fields are looked for once per event.
 */
export function sealFields(
  type: string,
  data: Record<string, unknown>,
  fields: readonly [string, unknown][],
  key: Buffer,
  customerId: string,
  kid?: string,
): SealedBox {
  const out = stripped(data, fields);
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad(type, customerId, kid));
  const paths: string[] = [];
  const values: unknown[] = [];
  for (const [p, v] of fields) {
    paths.push(p);
    values.push(v);
  }
  const plaintext = JSON.stringify(values);
  const body = cipher.update(plaintext, 'utf8');
  cipher.final(); // GCM: no output at the end, only the tag
  // IV | tag | ciphertext, in one buffer.
  const raw = Buffer.allocUnsafe(28 + body.length);
  iv.copy(raw, 0);
  cipher.getAuthTag().copy(raw, 12);
  body.copy(raw, 28);
  const box = raw.toString('base64');
  const sealed: Sealed =
    kid === undefined ? { v: SEAL_VERSION, paths, box } : { v: SEAL_VERSION_KID, kid, paths, box };
  if (customerId !== data.customer_id) sealed.customer_id = customerId;
  out.sealed = sealed;
  return { data: out, box, plaintext };
}

/**
 * The data with its personal fields sealed (a new object; the input is not changed), or the data
 * itself when there is nothing to seal. `key` null: the customer was erased, so nothing personal
 * is written at all (the fields are stored erased). `customerId`: whose key it is (default the
 * data's `customer_id`); recorded in `sealed.customer_id` when the data does not name them.
 * `kid`: the key is the pool key `key:<kid>` (a v2 box naming it), not the customer's own.
 * `plain`: told the box and the plaintext sealed in it (the JSON of the values), so the caller can
 * open its own boxes without decrypting them (openPlain).
 */
export function sealData(
  type: string,
  data: Record<string, unknown>,
  key: Buffer | null,
  customerId: string | null = typeof data.customer_id === 'string' ? data.customer_id : null,
  kid?: string,
  plain?: (box: string, plaintext: string) => void,
): Record<string, unknown> {
  const fields = personal(type, data);
  if (fields.length === 0 || customerId === null) return data;
  if (key === null) return erasedCopy(data, fields);
  const sealed = sealFields(type, data, fields, key, customerId, kid);
  plain?.(sealed.box, sealed.plaintext);
  return sealed.data;
}

/** The data with these personal fields written erased and `erased: true` (a key destroyed). */
export function erasedCopy(
  data: Record<string, unknown>,
  fields: readonly [string, unknown][],
): Record<string, unknown> {
  const out = stripped(data, fields);
  restore(
    out,
    fields.map(([p]) => p),
    null,
  );
  out.erased = true;
  return out;
}

const NOTHING: readonly string[] = [];

/**
 * Puts values back into `data` (a copy): top-level fields set on it, and each object holding fields
 * replaced by one copy with them (copyWith: a fast object, the input shared and never changed).
 */
function restore(data: Record<string, unknown>, paths: string[], values: unknown[] | null): void {
  let nested: Map<string, { keys: string[]; values: unknown[] }> | null = null;
  for (let i = 0; i < paths.length; i++) {
    const [a, field] = splitPath(paths[i] as string);
    const value = values === null ? structuredClone(ERASED[field] ?? null) : values[i];
    if (a === null) data[field] = value;
    else if (isObject(data[a])) {
      nested ??= new Map();
      const into = nested.get(a);
      if (into === undefined) nested.set(a, { keys: [field], values: [value] });
      else {
        into.keys.push(field);
        into.values.push(value);
      }
    }
  }
  if (nested !== null)
    for (const [a, into] of nested)
      data[a] = copyWith(data[a] as Record<string, unknown>, NOTHING, into.keys, into.values);
}

const SEALED_KEY: readonly string[] = ['sealed'];

/**
 * Data written in clear before sealing existed (an EventStoreDB log cannot be rewritten), as it reads
 * once its customer is erased: the personal fields erased and `erased: true`. Data without personal
 * fields is returned as it is.
 */
export function eraseClearData(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const fields = personal(type, data);
  if (fields.length === 0) return data;
  const out = without(data, NOTHING);
  restore(
    out,
    fields.map(([p]) => p),
    null,
  );
  out.erased = true;
  return out;
}

export function isSealed(
  data: Record<string, unknown>,
): data is Record<string, unknown> & { sealed: Sealed } {
  const s = data.sealed;
  return (
    isObject(s) &&
    (s.v === SEAL_VERSION || (s.v === SEAL_VERSION_KID && typeof s.kid === 'string')) &&
    Array.isArray(s.paths) &&
    typeof s.box === 'string'
  );
}

/**
 * The key subject that opens sealed data: `key:<kid>` for a v2 box, else its customer's
 * (`customer:<id>`); null when it is not sealed or names no customer.
 */
export function sealedKeySubject(data: Record<string, unknown>): string | null {
  if (!isSealed(data)) return null;
  if (data.sealed.v === SEAL_VERSION_KID) return kidSubject(data.sealed.kid as string);
  const c = data.sealed.customer_id ?? data.customer_id;
  return typeof c === 'string' ? customerSubject(c) : null;
}

/** The pool key a v2 box was sealed with (null for v1 or data not sealed). */
export function sealedKid(data: Record<string, unknown>): string | null {
  return isSealed(data) && data.sealed.v === SEAL_VERSION_KID ? (data.sealed.kid as string) : null;
}

/** The customer whose key opens sealed data (null when it names none). */
export function sealedCustomer(data: Record<string, unknown>): string | null {
  if (!isSealed(data)) return null;
  const c = data.sealed.customer_id ?? data.customer_id;
  return typeof c === 'string' ? c : null;
}

export class SealError extends Error {
  override name = 'SealError';
}

/**
 * The data as it was written, personal fields back in place; with `key` null (destroyed), the
 * personal fields read as erased and `erased: true` is set. Data that was never sealed is returned
 * as it is.
 */
/**
 * openData for a box whose plaintext the caller kept when it sealed it (sealData's `plain`): the
 * same result, without decrypting. Only for a key that is not destroyed (the caller checks).
 */
export function openPlain(data: Record<string, unknown>, plaintext: string): Record<string, unknown> {
  if (!isSealed(data)) return data;
  const rest = without(data, SEALED_KEY);
  restore(rest, data.sealed.paths, JSON.parse(plaintext) as unknown[]);
  return rest;
}

export function openData(
  type: string,
  data: Record<string, unknown>,
  key: Buffer | null,
): Record<string, unknown> {
  if (!isSealed(data)) return data;
  const sealed = data.sealed;
  const rest = without(data, SEALED_KEY);
  if (key === null) {
    restore(rest, sealed.paths, null);
    rest.erased = true;
    return rest;
  }
  const raw = Buffer.from(sealed.box, 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAAD(
      aad(
        type,
        String(sealed.customer_id ?? data.customer_id),
        sealed.v === SEAL_VERSION_KID ? sealed.kid : undefined,
      ),
    );
    decipher.setAuthTag(raw.subarray(12, 28));
    const values = JSON.parse(
      Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString(),
    ) as unknown[];
    restore(rest, sealed.paths, values);
    return rest;
  } catch (err) {
    throw new SealError(
      `the sealed fields of a ${type} of ${String(sealed.customer_id ?? data.customer_id)} do not open with its key: ${(err as Error).message}`,
    );
  }
}

/** The associated data of a MoreBox: the event type, the event's own box, and the box's owners. */
const moreAad = (type: string, own: { customer: string; kid?: string }, box: Omit<MoreBox, 'box'>) =>
  Buffer.from(
    [
      'couvert-seal-more-v1',
      type,
      `${own.customer} ${own.kid ?? ''}`,
      box.joint === true ? 'joint' : 'own',
      ...box.owners.map((o) => `${o.customer_id} ${o.kid ?? ''}`),
    ].join('\n'),
  );

/** The key of a MoreBox: HKDF-SHA-256 over its owners' keys (the event's own first when joint). */
const moreKey = (keys: readonly Buffer[]): Buffer =>
  Buffer.from(hkdfSync('sha256', Buffer.concat(keys), Buffer.alloc(0), 'couvert-seal-more-v1', 32));

/** IV | tag | ciphertext of the plaintext, base64 (the layout of every box). */
function encrypt(key: Buffer, aadBytes: Buffer, plaintext: string): string {
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aadBytes);
  const body = cipher.update(plaintext, 'utf8');
  cipher.final();
  const raw = Buffer.allocUnsafe(28 + body.length);
  iv.copy(raw, 0);
  cipher.getAuthTag().copy(raw, 12);
  body.copy(raw, 28);
  return raw.toString('base64');
}

function decrypt(key: Buffer, aadBytes: Buffer, box: string): unknown[] {
  const raw = Buffer.from(box, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(aadBytes);
  decipher.setAuthTag(raw.subarray(12, 28));
  return JSON.parse(
    Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString(),
  ) as unknown[];
}

/**
 * sealFields for an event that also holds other customers' data (otherSubjects, not empty): the
 * event's own box holds its customer's fields (and, for a fan-out, the bodies without the others'
 * data: `payloads_without_others`, which is not written), and one MoreBox per group holds that group's
 * paths with its owners' keys (`keys`: each other customer's key; null, already erased: their paths
 * are written as the stand-in, else erased, and `erased: true`). Two ciphers where one customer costs
 * one; called only when a second subject is present.
 */
export function sealSplit(
  type: string,
  data: Record<string, unknown>,
  fields: readonly [string, unknown][],
  own: { key: Buffer; customer: string; kid?: string },
  groups: readonly { customers: string[]; paths: string[]; joint: boolean }[],
  keys: ReadonlyMap<string, OwnerKey>,
): SealedBox {
  const standIn = type === 'WebhookDeliveriesScheduled' ? data[STAND_IN] : undefined;
  const base = standIn === undefined ? data : without(data, [STAND_IN]);
  const grouped = new Set(groups.flatMap((g) => g.paths));
  const value = new Map(fields);
  const ownFields: [string, unknown][] = [];
  for (const [p, v] of fields)
    if (!grouped.has(p)) ownFields.push([p, v]);
    else if (standIn !== undefined && p === 'payloads') ownFields.push([p, standIn]);
  const erasedPaths: string[] = [];
  const more: MoreBox[] = [];
  for (const g of groups) {
    const held = g.paths.filter((p) => value.has(p));
    if (held.length === 0) continue;
    const owners = g.customers.map((c) => keys.get(c));
    if (owners.some((o) => o === undefined || o.key === null)) {
      for (const p of held) if (!(standIn !== undefined && p === 'payloads')) erasedPaths.push(p);
      continue;
    }
    const box: Omit<MoreBox, 'box'> = {
      v: SEAL_VERSION_MORE,
      owners: (owners as OwnerKey[]).map((o) =>
        o.kid === undefined ? { customer_id: o.customer } : { customer_id: o.customer, kid: o.kid },
      ),
      ...(g.joint ? { joint: true as const } : {}),
      paths: held,
    };
    const k = moreKey([...(g.joint ? [own.key] : []), ...(owners as OwnerKey[]).map((o) => o.key as Buffer)]);
    more.push({
      ...box,
      box: encrypt(k, moreAad(type, own, box), JSON.stringify(held.map((p) => value.get(p)))),
    });
  }
  const out = stripped(base, fields);
  const paths = ownFields.map(([p]) => p);
  const plaintext = JSON.stringify(ownFields.map(([, v]) => v));
  const box = encrypt(own.key, aad(type, own.customer, own.kid), plaintext);
  const sealed: Sealed =
    own.kid === undefined
      ? { v: SEAL_VERSION, paths, box }
      : { v: SEAL_VERSION_KID, kid: own.kid, paths, box };
  if (own.customer !== data.customer_id) sealed.customer_id = own.customer;
  if (more.length > 0) sealed.more = more;
  out.sealed = sealed;
  if (erasedPaths.length > 0) {
    restore(out, erasedPaths, null);
    out.erased = true;
  }
  return { data: out, box, plaintext };
}

/** The key subjects a sealed event's other boxes need (Sealed.more), none for most events. */
export function moreSubjects(data: Record<string, unknown>): string[] {
  const more = isSealed(data) ? data.sealed.more : undefined;
  if (!Array.isArray(more)) return [];
  const out: string[] = [];
  for (const b of more as MoreBox[])
    for (const o of b.owners)
      out.push(o.kid === undefined ? customerSubject(o.customer_id) : kidSubject(o.kid));
  return out;
}

/**
 * The other boxes of a sealed event (Sealed.more) put back into `opened` (the event's own box already
 * opened: openData or openPlain; a copy this changes), with the keys `keyOf` gives for each subject
 * (moreSubjects; null: destroyed) and the event's own key (null: destroyed). A box that cannot be
 * opened leaves its paths as the event's own box holds them (a stand-in), else erased, and marks the
 * event `erased: true`.
 */
export function openMore(
  type: string,
  stored: Record<string, unknown>,
  opened: Record<string, unknown>,
  ownKey: Buffer | null,
  keyOf: (subject: string) => Buffer | null,
): Record<string, unknown> {
  if (!isSealed(stored)) return opened;
  const sealed = stored.sealed;
  if (!Array.isArray(sealed.more) || sealed.more.length === 0) return opened;
  const own = {
    customer: String(sealed.customer_id ?? stored.customer_id),
    ...(sealed.v === SEAL_VERSION_KID ? { kid: sealed.kid as string } : {}),
  };
  const out = opened;
  // A fan-out's own box holds the stand-in bodies (sealSplit): read as they were appended, beside.
  if (type === 'WebhookDeliveriesScheduled' && sealed.paths.includes('payloads'))
    out[STAND_IN] = out.payloads;
  for (const b of sealed.more) {
    const keys = b.owners.map((o) =>
      keyOf(o.kid === undefined ? customerSubject(o.customer_id) : kidSubject(o.kid)),
    );
    if ((b.joint === true && ownKey === null) || keys.some((k) => k === null)) {
      const erased = b.paths.filter((p) => !sealed.paths.includes(p));
      if (erased.length > 0) restore(out, erased, null);
      out.erased = true;
      continue;
    }
    try {
      const k = moreKey([...(b.joint === true ? [ownKey as Buffer] : []), ...(keys as Buffer[])]);
      restore(out, b.paths, decrypt(k, moreAad(type, own, b), b.box));
    } catch (err) {
      throw new SealError(
        `the sealed fields of a ${type} of ${b.owners.map((o) => o.customer_id).join(', ')} do not open with their keys: ${(err as Error).message}`,
      );
    }
  }
  return out;
}

/** The data with these paths read erased and `erased: true` (a copy; sealing-event-store's read rules). */
export function erasePaths(data: Record<string, unknown>, paths: string[]): Record<string, unknown> {
  if (paths.length === 0) return data;
  const out = without(data, NOTHING);
  restore(out, paths, null);
  out.erased = true;
  return out;
}
