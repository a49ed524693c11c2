// GET /customers, the incremental sync feed: customers in (updated_at, id) order, which is sync_seq
// order (projections/customer-feed.ts), paged with a keyset cursor on sync_seq. A customer changed
// during a pass takes a stamp beyond the cursor, so a full pass sees every customer at least once.
import { emailKey, emailKeySpellings, legacyPhoneKeys, phoneLookupKey } from '../commands/customers/contact';
import { CUSTOMER_SYNC_BUCKETS, CUSTOMERS, type CustomerDoc } from '../projections/customer-docs';
import { type BucketDoc, bucketId, bucketOf, feedHead, SYNC_BUCKET_SIZE } from '../projections/customer-feed';
import { instantBound } from '../src/core/datetime';
import type { DocumentStore, Filter } from '../src/ports/document-store';
import { type CursorPayload, decodeCursor, encodeCursor, type FeedFilters } from './customer-cursor';
import { type CursorKeyring, filtersOfPass } from './signed-cursor';

export interface FeedRequest {
  limit: number;
  cursor?: string;
  updated_since?: string;
  email?: string;
  phone?: string;
  external_id?: string;
  tag?: string;
}

export interface FeedPage {
  customers: CustomerDoc[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface WalkLimits {
  /** Most buckets one read covers when the order is sparse (customers moved on since). */
  maxWindow: number;
  /** A page gives up after this many reads of a very sparse order and says has_more (it resumes there). */
  maxRounds: number;
}
const LIMITS: WalkLimits = { maxWindow: 1024, maxRounds: 200 };

function filtersOf(req: FeedRequest, country: string | null): FeedFilters {
  const f: FeedFilters = {};
  if (req.email !== undefined) f.email = emailKey(req.email);
  if (req.phone !== undefined) f.phone = phoneLookupKey(req.phone, country);
  if (req.external_id !== undefined) f.external_id = req.external_id;
  if (req.tag !== undefined) f.tag = req.tag;
  if (req.updated_since !== undefined) f.updated_since = instantBound(req.updated_since);
  return f;
}

/**
 * The phone filter: the number's key, and for a number with an extension the keys customers stored
 * before extensions were kept may carry (contact.ts legacyPhoneKeys, from the key's own spellings).
 */
function phoneFilter(key: string, country: string | null) {
  const legacy = legacyPhoneKeys(key, country);
  return legacy.length ? { $in: [key, ...legacy] } : key;
}

/** The email filter: the address's key, and its internationalised domain's other spelling (contact.ts). */
function emailFilter(key: string) {
  const others = emailKeySpellings(key);
  return others.length ? { $in: [key, ...others] } : key;
}

function queryOf(restaurantId: string, f: FeedFilters, after: number, country: string | null = null): Filter {
  return {
    restaurant_id: restaurantId,
    ...(f.external_id !== undefined ? { external_id: f.external_id } : {}),
    ...(f.phone !== undefined ? { phone_key: phoneFilter(f.phone, country) } : {}),
    ...(f.email !== undefined ? { email_key: emailFilter(f.email) } : {}),
    sync_seq: { $gt: after },
    draft: false,
    ...(f.updated_since !== undefined ? { updated_at: { $gte: f.updated_since } } : {}),
    ...(f.tag !== undefined ? { tags: f.tag } : {}),
  };
}

export async function readFeed(
  docs: DocumentStore,
  restaurant: { _id: string; country_code: string | null },
  req: FeedRequest,
  key: CursorKeyring,
  limits: WalkLimits = LIMITS,
): Promise<FeedPage> {
  let filters = filtersOf(req, restaurant.country_code);
  let after = 0;
  if (req.cursor !== undefined) {
    const cursor: CursorPayload = decodeCursor(key, req.cursor, restaurant._id);
    // A cursor continues the query it came from; repeating its filters is fine, changing them is not.
    filters = filtersOfPass(filters, cursor.filters);
    after = cursor.after;
  }
  const exact =
    filters.email !== undefined || filters.phone !== undefined || filters.external_id !== undefined;
  const { found, exhausted, readThrough } = exact
    ? {
        found: await docs
          .collection<CustomerDoc>(CUSTOMERS)
          .find(queryOf(restaurant._id, filters, after, restaurant.country_code)),
        exhausted: true,
        readThrough: after,
      }
    : await walk(docs, restaurant._id, filters, after, req.limit, limits);
  const sorted = latestPerCustomer(found).sort((a, b) => a.sync_seq - b.sync_seq);
  const page = sorted.slice(0, req.limit);
  const has_more = sorted.length > req.limit || !exhausted;
  // A page cut short of `limit` on a very sparse order resumes after what it read, not where it began.
  const next =
    sorted.length > req.limit
      ? (page.at(-1) as CustomerDoc).sync_seq
      : Math.max(readThrough, page.at(-1)?.sync_seq ?? after);
  return {
    customers: page,
    has_more,
    next_cursor: has_more ? encodeCursor(key, { restaurant_id: restaurant._id, after: next, filters }) : null,
  };
}

/** A customer read twice during one page (it moved on meanwhile) counts once, at its newest place. */
function latestPerCustomer(list: CustomerDoc[]): CustomerDoc[] {
  const byId = new Map<string, CustomerDoc>();
  for (const d of list) {
    const known = byId.get(d._id);
    if (!known || known.sync_seq < d.sync_seq) byId.set(d._id, d);
  }
  return [...byId.values()];
}

/**
 * Reads the order in increasing ranges of sync_seq, from `after`, each through the buckets that cover
 * it, until more than `limit` customers are found or the head is reached (read again each round). The
 * first range is just long enough for a dense page; ranges double while the order is sparse. Nothing
 * is skipped even if a read is not a snapshot: a customer that changes takes a stamp beyond the head,
 * so it either was read at its old place already or is read at its new one, never behind a range read.
 */
async function walk(
  docs: DocumentStore,
  restaurantId: string,
  filters: FeedFilters,
  after: number,
  limit: number,
  limits: WalkLimits,
): Promise<{ found: CustomerDoc[]; exhausted: boolean; readThrough: number }> {
  const col = docs.collection<CustomerDoc>(CUSTOMERS);
  const found: CustomerDoc[] = [];
  const seen = new Set<string>();
  const since = await firstBucketSince(docs, restaurantId, filters.updated_since);
  let from = Math.max(after, since * SYNC_BUCKET_SIZE - 1);
  let width = limit + 1;
  for (let round = 0; round < limits.maxRounds; round++) {
    const head = await feedHead(docs, restaurantId);
    if (from >= head) return { found, exhausted: true, readThrough: after };
    const to = Math.min(from + width, head);
    const buckets: number[] = [];
    for (let b = bucketOf(from + 1); b <= bucketOf(to); b++) buckets.push(b);
    const got = await col.find({
      ...queryOf(restaurantId, filters, from),
      sync_seq: { $gt: from, $lte: to },
      sync_bucket: { $in: buckets },
    });
    for (const d of got) {
      found.push(d);
      seen.add(d._id);
    }
    from = to;
    if (seen.size > limit) return { found, exhausted: true, readThrough: after };
    width = Math.min(width * 2, limits.maxWindow * SYNC_BUCKET_SIZE);
  }
  // Every customer of the ranges read was found (fewer than limit): the next page starts after them.
  return { found, exhausted: false, readThrough: from };
}

/**
 * The first bucket that can hold a customer updated at or after `since`. Buckets' lower bounds
 * increase with the bucket number, so a binary search over their documents finds it in a few reads.
 */
async function firstBucketSince(
  docs: DocumentStore,
  restaurantId: string,
  since: string | undefined,
): Promise<number> {
  if (since === undefined) return 0;
  const col = docs.collection<BucketDoc>(CUSTOMER_SYNC_BUCKETS);
  const lowerBound = async (b: number) =>
    (await col.findOne({ _id: bucketId(restaurantId, b) }))?.first_updated_at;
  // Smallest bucket whose lower bound is past `since`; the bucket before it may still hold matches.
  let lo = 0;
  let hi = bucketOf(await feedHead(docs, restaurantId)) + 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const bound = await lowerBound(mid);
    if (bound !== undefined && bound > since) hi = mid;
    else lo = mid + 1;
  }
  return Math.max(0, lo - 1);
}
