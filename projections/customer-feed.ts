// The sync order of GET /customers (updated_at, then id), made safe to page through while customers
// change.
//
// Every change of a customer takes the next stamp of its restaurant, in log order: sync_seq one more
// than the last, and updated_at = max(the event's time, the last updated_at + 1 ms). So within a
// restaurant updated_at strictly increases with sync_seq, and ordering by sync_seq *is* ordering by
// (updated_at, id). Two things follow:
// - A customer that changes during a pass takes a stamp beyond every stamp already given, hence
//   beyond any cursor: a pass can see it again but never loses it. A clock that reads the same
//   millisecond twice, or two processes whose writes commit out of clock order (the "late commit"
//   the spec warns about), cannot move a customer behind a cursor.
// - The feed pages by equality lookups only: sync_bucket = floor(sync_seq / SYNC_BUCKET_SIZE) is
//   indexed with the restaurant, and a page reads a few consecutive buckets. The embedded document
//   store answers equalities from its index maps but would scan and sort the whole restaurant for a
//   range query, a cost paid on every page of a full pass.
// The price: under more than 1000 changes a second in one restaurant, updated_at runs slightly ahead
// of the clock until the burst ends.
import type { DocumentStore } from '../src/ports/document-store';
import { positionToString } from '../src/ports/event-store';
import { CUSTOMER_FEEDS, CUSTOMER_SYNC_BUCKETS } from './customer-docs';

export const SYNC_BUCKET_SIZE = 128;
export const bucketOf = (seq: number) => Math.floor(seq / SYNC_BUCKET_SIZE);

interface FeedDoc {
  _id: string;
  seq: number;
  last_at: string;
  /** Log position that took the last stamp: a redelivered event gets the same stamp back. */
  pos: string;
  [k: string]: unknown;
}

export interface BucketDoc {
  _id: string;
  restaurant_id: string;
  bucket: number;
  first_updated_at: string;
  [k: string]: unknown;
}

export interface Stamp {
  sync_seq: number;
  sync_bucket: number;
  updated_at: string;
}

export const bucketId = (restaurantId: string, bucket: number) => `${restaurantId}:${bucket}`;

/** The next stamp of `restaurantId`, for the event at `position` that happened `at`. */
export async function takeStamp(
  docs: DocumentStore,
  restaurantId: string,
  at: string,
  position: bigint,
): Promise<Stamp> {
  const feeds = docs.collection<FeedDoc>(CUSTOMER_FEEDS);
  const pos = positionToString(position);
  const feed = await feeds.findOne({ _id: restaurantId });
  if (feed && feed.pos === pos)
    return { sync_seq: feed.seq, sync_bucket: bucketOf(feed.seq), updated_at: feed.last_at };
  const seq = (feed?.seq ?? 0) + 1;
  const floor = feed ? new Date(Date.parse(feed.last_at) + 1).toISOString() : at;
  const updated_at = at > floor ? at : floor;
  // The bucket's lower bound is written before any customer carries the bucket, so a reader looking
  // up where updated_since starts never finds a customer in a bucket it does not know.
  if (!feed || bucketOf(feed.seq) !== bucketOf(seq))
    await docs.collection<BucketDoc>(CUSTOMER_SYNC_BUCKETS).updateOne(
      { _id: bucketId(restaurantId, bucketOf(seq)) },
      {
        $set: { restaurant_id: restaurantId, bucket: bucketOf(seq) },
        $setOnInsert: { first_updated_at: updated_at },
      },
      { upsert: true },
    );
  await feeds.replaceOne(
    { _id: restaurantId },
    { _id: restaurantId, seq, last_at: updated_at, pos },
    { upsert: true },
  );
  return { sync_seq: seq, sync_bucket: bucketOf(seq), updated_at };
}

/** The head of a restaurant's feed: the last sync_seq given, 0 when none. */
export async function feedHead(docs: DocumentStore, restaurantId: string): Promise<number> {
  const feed = await docs.collection<FeedDoc>(CUSTOMER_FEEDS).findOne({ _id: restaurantId });
  return feed?.seq ?? 0;
}
