// POST /customers (spec §4): check the body, match it (external_id, then phone, then email) and
// return, update or create as on_match says. Matching reads the read model, which can still show a
// customer a concurrent command has just deleted or merged away: the update then finds it gone, and the
// call matches again once the read models include that change, instead of answering 404 for an id
// the partner never gave. Within a process, calls sharing a key (the restaurant's external_id, phone or
// email) match and write one after the other, each once the read models show the one before: parallel
// identical calls made one customer per call. Inline reservation customers (inline.ts), missed calls
// and a CSV import run in this process (its slices: src/customer-import/match-key-hold.ts) take the
// same keys. Across processes (scaled out, the CLI's import) matching is still not a lock (spec §4).

import type { CustomerDoc } from '../../projections/customer-docs';
import { CUSTOMER_MATCH_ORDER, findMatch, type MatchKey, matchKeys } from '../../queries/customers';
import type { Config } from '../../src/config';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { KeyHolds } from '../../src/core/key-holds';
import type { WriteDeps } from '../../src/core/write-deps';
import type { Logger } from '../../src/logger';
import type { DocumentStore } from '../../src/ports/document-store';
import { blacklistedMatch, twinBlacklistReason } from './blacklisted-match';
import type { ProfileInput } from './bounds';
import { followMerges } from './follow-merges';
import { type CustomerRestaurant, checkCustomerInput, createCustomer, updateCustomer } from './handler';
import type { OnMatch } from './inline';

/** The runtime's parts an upsert uses: the write side, the read models and read-your-writes. */
export interface UpsertDeps extends WriteDeps, KeyWaitDeps {
  docs: DocumentStore;
  settle(position: bigint | null | undefined): Promise<unknown>;
}

export type UpsertOutcome =
  | { result: 'matched'; customerId: string; doc: CustomerDoc; position: null }
  | { result: 'updated' | 'created'; customerId: string; position: bigint | null };

/**
 * The position the read models must include before matching again, for a customer that vanished
 * under the update: its last event, and when it was merged away, the last event of the customer it
 * was merged into (a merge closes the absorbed customer first and writes the survivor after, at a
 * later position: matching as of the first alone missed the survivor's new email or phone, and
 * created a duplicate), following a chain of merges. The CSV import matches again the same way.
 */
export async function vanishedAt(
  deps: Pick<WriteDeps, 'events'>,
  customerId: string,
): Promise<bigint | undefined> {
  return (await followMerges(deps, customerId)).lastPosition;
}

/** How many times a match that vanished under the update is looked for again. */
export const REMATCHES = 3;

/**
 * The update of the matched `customerId` failed with `err`. Deleted or merged away since the read
 * model showed it (404), and `again` (the caller's attempts not used up): returns once the read models
 * include its last event (`vanishedAt`), for the caller to match again. Anything else is thrown.
 * POST /customers, inline reservation customers and the CSV import's rows do so.
 */
export async function settleVanished(
  deps: Pick<WriteDeps, 'events'> & { settle(position: bigint | null): Promise<unknown> },
  customerId: string,
  err: unknown,
  again: boolean,
): Promise<void> {
  if (!(err instanceof ApiError && err.status === 404) || !again) throw err;
  await deps.settle((await vanishedAt(deps, customerId)) ?? null);
}

/**
 * This process's matching customers in flight, per restaurant and match key: POST /customers, inline
 * reservation customers, missed calls, and a CSV import's slices (`heldMatchKey`).
 */
export const matchKeyHolds = new KeyHolds();

/**
 * A match key of a restaurant as `matchKeyHolds` holds it. matchKeys and a CSV import row's analysis
 * (analysis.ts) spell a key alike (`x:external_id`, `p:phone key`, `e:email key`): the import and the
 * API take one key for one guest, and the import's keys (a slice's, ~1,500) need no translation.
 */
export const heldMatchKey = (restaurantId: string, key: string): string => `${restaurantId}\u0000${key}`;

/** What a matching needs to wait for its keys a bounded time (`holdingMatchKeys`). */
export interface KeyWaitDeps {
  /** Its readYourWritesTimeoutMs bounds the wait (the default's when absent, as in some tests). */
  config?: Pick<Config, 'readYourWritesTimeoutMs'>;
  logger?: Pick<Logger, 'warn'>;
}

/** The wait for the keys when no config says (config.ts's READ_YOUR_WRITES_TIMEOUT_MS default). */
const KEY_WAIT_MS = 2000;

/**
 * Runs `task`, which matches `input` on `order` and may write, once no other matching of this process
 * shares one of its keys in this restaurant (POST /customers, inline reservation customers, missed
 * calls, a CSV import's slices: the one queue; its keys taken all at once, key-holds.ts). `task` must
 * settle what it wrote before it returns: the next one matches on the read models. A holder that does
 * not let go (a stalled import) is waited for READ_YOUR_WRITES_TIMEOUT_MS at the most: `task` then
 * runs without the keys (a warning says so), as across processes, where nothing holds them.
 */
export function holdingMatchKeys<T>(
  deps: KeyWaitDeps,
  restaurant: Pick<CustomerRestaurant, '_id' | 'country_code'>,
  input: ProfileInput,
  order: readonly MatchKey[],
  task: () => Promise<T>,
): Promise<T> {
  const keys = [...new Set(matchKeys(restaurant, input, order))].map((key) =>
    heldMatchKey(restaurant._id, key),
  );
  const ms = deps.config?.readYourWritesTimeoutMs ?? KEY_WAIT_MS;
  return matchKeyHolds.run(keys, task, {
    ms,
    onGiveUp: () =>
      // No key in the line: they are someone's phone or email.
      deps.logger?.warn(
        { restaurant_id: restaurant._id, keys: keys.length, waited_ms: ms },
        'matching went ahead without its match keys: another matching (a CSV import?) held them beyond the configured wait',
      ),
  });
}

/**
 * Runs `task`, a matching that may write, in turn with the others of this process sharing one of its
 * keys (`holdingMatchKeys`), and settles the position it returns before the next one matches: the read
 * models show its write first. With `skip` (on_match=create_new matches nothing) it runs at once.
 */
export function matchingInTurn<T extends { position: bigint | null }>(
  deps: KeyWaitDeps & { settle(position: bigint | null): Promise<unknown> },
  restaurant: Pick<CustomerRestaurant, '_id' | 'country_code'>,
  input: ProfileInput,
  order: readonly MatchKey[],
  skip: boolean,
  task: () => Promise<T>,
): Promise<T> {
  if (skip) return task();
  return holdingMatchKeys(deps, restaurant, input, order, async () => {
    const outcome = await task();
    await deps.settle(outcome.position);
    return outcome;
  });
}

export async function upsertCustomer(
  deps: UpsertDeps,
  restaurant: CustomerRestaurant,
  input: ProfileInput & { name: string },
  onMatch: OnMatch,
  meta: CommandMeta,
): Promise<UpsertOutcome> {
  return matchingInTurn(deps, restaurant, input, CUSTOMER_MATCH_ORDER, onMatch === 'create_new', () =>
    matchAndWrite(deps, restaurant, input, onMatch, meta),
  );
}

async function matchAndWrite(
  deps: UpsertDeps,
  restaurant: CustomerRestaurant,
  input: ProfileInput & { name: string },
  onMatch: OnMatch,
  meta: CommandMeta,
): Promise<UpsertOutcome> {
  // Checked before matching: a body that would be refused without a match is refused with one.
  const checked = await checkCustomerInput(deps, restaurant, input);
  // create_new ignores a match and always creates (spec §4), but never an unblacklisted twin of a
  // blacklisted guest, who could then book by the new id: the twin is created blacklisted.
  const blacklisted =
    onMatch === 'create_new'
      ? await blacklistedMatch(deps, deps.docs, checked, input, CUSTOMER_MATCH_ORDER)
      : null;
  for (let attempt = 0; onMatch !== 'create_new'; attempt++) {
    const match = await findMatch(deps.docs, checked, input, CUSTOMER_MATCH_ORDER);
    if (!match) break;
    const customerId = match.doc._id;
    if (onMatch === 'return_existing')
      return { result: 'matched', customerId, doc: match.doc, position: null };
    try {
      const updated = await updateCustomer(deps, checked, customerId, input, meta);
      return { result: 'updated', customerId, position: updated.position };
    } catch (err) {
      // Deleted or merged since the read model showed it: match again once the read models include
      // the customer's last event (not the log's head, which may be a CSV import's still unsettled).
      await settleVanished(deps, customerId, err, attempt + 1 < REMATCHES);
    }
  }
  const created = await createCustomer(
    deps,
    checked,
    input,
    meta,
    blacklisted === null ? {} : { blacklistReason: twinBlacklistReason(blacklisted.customerId) },
  );
  return { result: 'created', customerId: created.customerId, position: created.position };
}
