// Reading customers: one by id, matching (POST /customers, inline reservation customers), and the
// short form reservations show. Every read filters on the caller's restaurant; drafts are hidden from
// partners.
import {
  emailKey,
  emailKeySpellings,
  legacyPhoneKeys,
  matchablePhoneKey,
  phoneLookupKey,
} from '../commands/customers/contact';
import { CUSTOMER_MERGES, CUSTOMERS, type CustomerDoc } from '../projections/customer-docs';
import { notFound } from '../src/core/errors';
import type { DocumentStore, Filter } from '../src/ports/document-store';

const customers = (docs: DocumentStore) => docs.collection<CustomerDoc>(CUSTOMERS);

/** A customer a partner may see: in its restaurant and not a draft. */
export async function findCustomer(
  docs: DocumentStore,
  restaurantId: string,
  id: string,
): Promise<CustomerDoc | null> {
  const doc = await customers(docs).findOne({ _id: id });
  return doc && doc.restaurant_id === restaurantId && !doc.draft ? doc : null;
}

export async function getCustomer(
  docs: DocumentStore,
  restaurantId: string,
  id: string,
): Promise<CustomerDoc> {
  const doc = await findCustomer(docs, restaurantId, id);
  if (!doc) throw notFound(`customer ${id}`);
  return doc;
}

export type MatchKey = 'external_id' | 'phone' | 'email';

/** POST /customers (and a CSV import) match on these keys, in this order (spec §4). */
export const CUSTOMER_MATCH_ORDER: readonly MatchKey[] = ['external_id', 'phone', 'email'];

export interface MatchInput {
  external_id?: string | null;
  phone_number?: string | null;
  email?: string | null;
}

export interface Match {
  doc: CustomerDoc;
  on: MatchKey;
}

/** The first created: a stable choice when several share a key (creation order in the log). */
const oldest = (list: CustomerDoc[]) => list.sort((a, b) => a.created_seq - b.created_seq)[0];

/**
 * The field and value findMatch looks `input` up by on key `on` (null: the input has none usable),
 * and for a phone with an extension the keys customers stored before extensions were kept may carry
 * (`legacy`, contact.ts legacyPhoneKeys): the oldest customer holding any of them matches.
 */
function matchFilter(
  on: MatchKey,
  restaurant: { country_code: string | null },
  input: MatchInput,
  phoneKey: string | null | undefined,
): { field: 'external_id' | 'phone_key' | 'email_key'; value: string; legacy?: string[] } | null {
  if (on === 'external_id' && input.external_id) return { field: 'external_id', value: input.external_id };
  if (on === 'phone' && input.phone_number) {
    const key =
      phoneKey !== undefined
        ? phoneKey
        : matchablePhoneKey(phoneLookupKey(input.phone_number, restaurant.country_code));
    if (!key) return null;
    // Only a number with an extension has legacy keys, and its key says so: the parse legacyPhoneKeys
    // needs (~15 µs) is skipped for every other number (the import asks for each row).
    const legacy = key.includes(';ext=') ? legacyPhoneKeys(input.phone_number, restaurant.country_code) : [];
    return legacy.length ? { field: 'phone_key', value: key, legacy } : { field: 'phone_key', value: key };
  }
  if (on === 'email' && input.email) {
    // An address stored before writes required the ASCII form of an internationalised domain may
    // hold its Unicode form: the oldest customer holding either spelling matches.
    const key = emailKey(input.email);
    const legacy = emailKeySpellings(key);
    return legacy.length ? { field: 'email_key', value: key, legacy } : { field: 'email_key', value: key };
  }
  return null;
}

/** The prefix of a match key per field, as the CSV import's analysis spells a row's keys (analysis.ts). */
const KEY_PREFIX = { external_id: 'x:', phone_key: 'p:', email_key: 'e:' } as const;

/**
 * The keys findMatch looks `input` up by, in `order` (none usable: left out), spelt as the CSV
 * import's analysis spells a row's (`x:external_id`, `p:phone key`, `e:email key`): the import and
 * POST /customers hold one key for one guest (commands/customers/upsert.ts).
 */
export function matchKeys(
  restaurant: { country_code: string | null },
  input: MatchInput,
  order: readonly MatchKey[],
): string[] {
  const keys: string[] = [];
  for (const on of order) {
    const f = matchFilter(on, restaurant, input, undefined);
    if (f) keys.push(`${KEY_PREFIX[f.field]}${f.value}`);
  }
  return keys;
}

/**
 * The customer that `input` designates, trying the keys in `order` (POST /customers: external_id,
 * phone, email; inline reservation customers: phone, email). Drafts never match: matching one would
 * show it to a partner.
 */
export async function findMatch(
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  input: MatchInput,
  order: readonly MatchKey[],
  /**
   * The phone's key when the caller derived it already from `input.phone_number` with this
   * restaurant's country (matchablePhoneKey(phoneLookupKey(…)); null: none usable): the CSV import's
   * worker thread does, so the number is not parsed a second time on the main thread.
   */
  phoneKey?: string | null,
): Promise<Match | null> {
  for (const on of order) {
    const f = matchFilter(on, restaurant, input, phoneKey);
    if (!f) continue;
    const value = f.legacy ? { $in: [f.value, ...f.legacy] } : f.value;
    const filter: Filter = { restaurant_id: restaurant._id, [f.field]: value, draft: false };
    const doc = oldest(await customers(docs).find(filter));
    if (doc) return { doc, on };
  }
  return null;
}

/**
 * Every customer findMatch would choose among on key `on`, oldest first (findMatch answers the first):
 * a CSV preview walks on to the next when a row of the file moved the first one's key away.
 */
export async function matchCandidates(
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  input: MatchInput,
  on: MatchKey,
  phoneKey?: string | null,
): Promise<CustomerDoc[]> {
  const f = matchFilter(on, restaurant, input, phoneKey);
  if (!f) return [];
  const value = f.legacy ? { $in: [f.value, ...f.legacy] } : f.value;
  const list = await customers(docs).find({ restaurant_id: restaurant._id, [f.field]: value, draft: false });
  return list.sort((a, b) => a.created_seq - b.created_seq);
}

/**
 * findMatch for many inputs against the same read model (a CSV import's slice): one query per key
 * field, for every input's value at once ($in), instead of one per input and key. Answers, in the
 * inputs' order, what findMatch answers for each.
 */
export async function findMatches(
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  inputs: readonly { input: MatchInput; phoneKey?: string | null }[],
  order: readonly MatchKey[],
): Promise<(Match | null)[]> {
  const wanted = inputs.map(({ input, phoneKey }) =>
    order.map((on) => ({ on, filter: matchFilter(on, restaurant, input, phoneKey) })),
  );
  const values = new Map<string, Set<string>>();
  for (const list of wanted)
    for (const { filter } of list)
      if (filter) {
        const set = values.get(filter.field) ?? new Set<string>();
        set.add(filter.value);
        for (const value of filter.legacy ?? []) set.add(value);
        values.set(filter.field, set);
      }
  // Per field, per value: the customers holding it (what findMatch's query on it would find).
  const found = new Map<string, Map<string, CustomerDoc[]>>();
  for (const [field, set] of values) {
    const byValue = new Map<string, CustomerDoc[]>();
    const filter: Filter = { restaurant_id: restaurant._id, [field]: { $in: [...set] }, draft: false };
    for (const doc of await customers(docs).find(filter)) {
      const value = (doc as unknown as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue;
      const list = byValue.get(value);
      if (list) list.push(doc);
      else byValue.set(value, [doc]);
    }
    found.set(field, byValue);
  }
  return wanted.map((list) => {
    for (const { on, filter } of list) {
      if (!filter) continue;
      const byValue = found.get(filter.field);
      const docs = [filter.value, ...(filter.legacy ?? [])].flatMap((v) => byValue?.get(v) ?? []);
      const doc = oldest(docs);
      if (doc) return { doc, on };
    }
    return null;
  });
}

/** The short customer of a reservation (spec §2.5). */
export interface ReservationCustomer {
  id: string;
  name: string;
  email: string | null;
  phone_number: string | null;
  lang: string;
  blacklisted: boolean;
  /** A messaging channel's draft: hidden from partners (partnerCustomersForReservations leaves it out). */
  draft: boolean;
}

const short = (d: CustomerDoc): ReservationCustomer => ({
  id: d._id,
  name: d.name,
  email: d.email,
  phone_number: d.phone_number,
  lang: d.lang,
  blacklisted: d.blacklisted,
  draft: d.draft,
});

/**
 * The customer a reservation links to, for the reservations module. An id that was merged away
 * resolves to the customer that absorbed it, so old reservations keep showing their guest. Drafts
 * resolve too (a channel's reservation may link one); the caller decides what a partner sees.
 */
export async function getCustomerForReservation(
  docs: DocumentStore,
  restaurantId: string,
  id: string,
): Promise<ReservationCustomer | null> {
  return (await getCustomersForReservations(docs, restaurantId, [id])).get(id) ?? null;
}

/**
 * The customers of reservations as a partner sees them, keyed by the ids asked for: the one rule every
 * partner read of a reservation applies (answers, lists, webhooks through reservation-lookups.ts, the
 * history's customer_id changes). A messaging channel's draft is hidden until published
 * (docs/customers.md): left out of `shown`, its id in `hidden` (a reservation linked to one shows no
 * customer, and its id is never told). An id no customer answers for is in neither.
 */
export async function partnerCustomersForReservations(
  docs: DocumentStore,
  restaurantId: string,
  ids: readonly string[],
): Promise<{ shown: Map<string, ReservationCustomer>; hidden: ReadonlySet<string> }> {
  const shown = new Map<string, ReservationCustomer>();
  const hidden = new Set<string>();
  for (const [id, c] of await getCustomersForReservations(docs, restaurantId, ids))
    if (c.draft) hidden.add(id);
    else shown.set(id, c);
  return { shown, hidden };
}

/** Batch form of getCustomerForReservation, keyed by the ids asked for (drafts included). */
export async function getCustomersForReservations(
  docs: DocumentStore,
  restaurantId: string,
  ids: readonly string[],
): Promise<Map<string, ReservationCustomer>> {
  const wanted = [...new Set(ids)];
  const out = new Map<string, ReservationCustomer>();
  if (wanted.length === 0) return out;
  const merges = await docs
    .collection<{ _id: string; restaurant_id: string; into: string }>(CUSTOMER_MERGES)
    .find({ _id: { $in: wanted } });
  const into = new Map(merges.filter((m) => m.restaurant_id === restaurantId).map((m) => [m._id, m.into]));
  const resolved = wanted.map((id) => into.get(id) ?? id);
  const found = await customers(docs).find({ _id: { $in: [...new Set(resolved)] } });
  const byId = new Map(found.filter((d) => d.restaurant_id === restaurantId).map((d) => [d._id, d]));
  wanted.forEach((id, i) => {
    const doc = byId.get(resolved[i] as string);
    if (doc) out.set(id, short(doc));
  });
  return out;
}
