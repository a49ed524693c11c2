// Customer commands: load the stream, decide, append with the expected revision (runCommand retries on
// a conflict). Custom field definitions are read from the catalog's write side only when a command
// touches custom fields.
import { type CommandOutcome, runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { newId } from '../../src/core/ids';
import type { WriteDeps } from '../../src/core/write-deps';
import { type NewEvent, NO_STREAM, type RecordedEvent } from '../../src/ports/event-store';
import { addRelinks, type RelinkDeps, type RelinkOutcome, relinkReservations } from '../reservations/relink';
import type { ProfileInput } from './bounds';
import type { CustomFieldDefinition } from './custom-fields';
import {
  decideAddOptOut,
  decideBlacklist,
  decideClearBlacklist,
  decideCreate,
  decideDelete,
  decideDeleteAbsorbed,
  decideFlagDraft,
  decidePublishDraft,
  decideRemoveOptOut,
  decideUpdate,
  type Viewer,
} from './decide';
import { type CustomerOrigin, type CustomerProfile, customerStream, type OptOutChannel } from './events';
import { loadCustomFieldDefinitions } from './field-definitions';
import { prepareProfile, type WriteContext } from './prepare';
import { type CustomerState, evolveCustomer, initialCustomer } from './state';

/** The restaurant a partner writes for. */
export interface CustomerRestaurant {
  _id: string;
  country_code: string | null;
  /** Inline reservation customers: match (true) or always create (false), spec §4. */
  customer_matching: boolean;
  /**
   * The restaurant's custom field definitions when the caller already loaded them from the catalog's
   * write side (a CSV import loads them once per batch); otherwise each command loads them.
   */
  customer_fields?: readonly CustomFieldDefinition[];
}

export type CustomerOutcome = CommandOutcome<CustomerState>;

function run(
  deps: WriteDeps,
  id: string,
  meta: CommandMeta,
  decide: (state: CustomerState, at: string) => NewEvent[],
): Promise<CustomerOutcome> {
  return runCommand<CustomerState>(deps.events, {
    stream: customerStream(id),
    initial: initialCustomer,
    evolve: evolveCustomer,
    decide: (state) => decide(state, deps.clock.now().toISOString()),
    metadata: meta,
    clock: deps.clock,
  });
}

export async function writeContext(
  deps: WriteDeps,
  restaurant: CustomerRestaurant,
  input: ProfileInput,
): Promise<WriteContext> {
  const needed = input.custom_fields !== undefined && Object.keys(input.custom_fields).length > 0;
  return {
    restaurantId: restaurant._id,
    country: restaurant.country_code,
    definitions: needed
      ? (restaurant.customer_fields ?? (await loadCustomFieldDefinitions(deps, restaurant._id)))
      : [],
  };
}

/**
 * Checks a partner's input as writing it would (400 on a bound or a phone number that is not possible,
 * 422 on a custom field), without writing: POST /customers checks before it matches, so a body is
 * refused whether or not a customer matches it. Returns the restaurant with the custom field
 * definitions it loaded, for the write that follows.
 */
export async function checkCustomerInput(
  deps: WriteDeps,
  restaurant: CustomerRestaurant,
  input: ProfileInput & { name: string },
): Promise<CustomerRestaurant> {
  const ctx = await writeContext(deps, restaurant, input);
  prepareProfile(input, ctx);
  return ctx.definitions.length ? { ...restaurant, customer_fields: ctx.definitions } : restaurant;
}

export interface CreateOptions {
  /** A new id is generated unless given (a caller that must name the customer before writing it). */
  customerId?: string;
  draft?: boolean;
  origin?: CustomerOrigin;
  /**
   * Created blacklisted, in the same append, for this reason: on_match create_new on details that
   * match a blacklisted guest (spec §4: a new customer is always created) must not make a twin who
   * could book by the new id.
   */
  blacklistReason?: string;
  /**
   * With `customerId`: the CustomerCreated event's id, deterministic for a caller that may repeat the
   * create after a crash (a CSV import). The stream is then not read first: the append expects no
   * stream, and a repeat of the same append is answered as the original (the store deduplicates ids).
   */
  eventId?: string;
  /**
   * The profile `prepareProfile` already made of this input, with this restaurant's country and
   * custom field definitions (a CSV import checks and prepares its rows in a worker thread): the
   * input is then not checked a second time. Only with `eventId`.
   */
  prepared?: CustomerProfile;
}

export async function createCustomer(
  deps: WriteDeps,
  restaurant: CustomerRestaurant,
  input: ProfileInput & { name: string },
  meta: CommandMeta,
  options: CreateOptions = {},
): Promise<CustomerOutcome & { customerId: string }> {
  const ctx = await writeContext(deps, restaurant, input);
  const flags = { draft: options.draft ?? false, origin: options.origin ?? 'API' };
  if (options.customerId !== undefined && options.eventId === undefined) {
    const customerId = options.customerId;
    const outcome = await run(deps, customerId, meta, (s, at) =>
      withBlacklist(decideCreate(s, customerId, input, ctx, flags, at), customerId, options, at),
    );
    return { ...outcome, customerId };
  }
  // A fresh random id has no stream to read: decide on the empty state and append expecting none
  // (the store still refuses if one exists). It spares a read on the hottest write of the module.
  const customerId = options.customerId ?? newId('cus');
  const at = deps.clock.now().toISOString();
  const prepared = options.eventId === undefined ? undefined : options.prepared;
  const decided = withBlacklist(
    decideCreate(initialCustomer, customerId, input, ctx, flags, at, prepared),
    customerId,
    options,
    at,
  );
  const events = decided.map((e) => ({
    ...e,
    ...(options.eventId === undefined ? {} : { id: options.eventId }),
    metadata: { ...meta, ...e.metadata },
  }));
  // An id minted here cannot meet an erasure tombstone: the sealing layer need not look for one.
  const { position } = await deps.events.append(
    customerStream(customerId),
    events,
    NO_STREAM,
    options.customerId === undefined ? { mintedId: true } : undefined,
  );
  return { state: foldDecided(events, at, position), appended: events, position, customerId };
}

/** A creation's events, followed by its blacklisting when `options.blacklistReason` asks for it. */
const withBlacklist = (created: NewEvent[], id: string, options: CreateOptions, at: string) =>
  options.blacklistReason === undefined || created.length === 0
    ? created
    : [...created, ...decideBlacklist(foldDecided(created, at), id, options.blacklistReason, at, true)];

/** The state a fresh stream's decided events make (position 0n before they are appended). */
const foldDecided = (events: readonly NewEvent[], at: string, position = 0n) =>
  events.reduce(
    (s, e, revision) =>
      evolveCustomer(s, { ...e, id: '', created: at, stream: '', revision, position } as RecordedEvent),
    initialCustomer,
  );

export async function updateCustomer(
  deps: WriteDeps,
  restaurant: CustomerRestaurant,
  id: string,
  input: ProfileInput,
  meta: CommandMeta,
  viewer: Viewer = 'partner',
): Promise<CustomerOutcome> {
  const ctx = await writeContext(deps, restaurant, input);
  return run(deps, id, meta, (s, at) => decideUpdate(s, id, input, ctx, viewer, at));
}

export const blacklistCustomer = (deps: WriteDeps, id: string, reason: string | null, meta: CommandMeta) =>
  run(deps, id, meta, (s, at) => decideBlacklist(s, id, reason, at));

export const clearCustomerBlacklist = (deps: WriteDeps, id: string, meta: CommandMeta) =>
  run(deps, id, meta, (s, at) => decideClearBlacklist(s, id, at));

export const addMarketingOptOut = (
  deps: WriteDeps,
  id: string,
  channel: OptOutChannel,
  reason: string | null,
  meta: CommandMeta,
) => run(deps, id, meta, (s, at) => decideAddOptOut(s, id, channel, reason, at));

export const removeMarketingOptOut = (
  deps: WriteDeps,
  id: string,
  channel: OptOutChannel,
  meta: CommandMeta,
) => run(deps, id, meta, (s, at) => decideRemoveOptOut(s, id, channel, at));

/**
 * Deletes a customer, which erases them (their keys are destroyed, docs/AUDIT.md), then every customer
 * merged into them, at any depth: those records are the same person's, their events sealed with keys
 * of their own. A deletion already made still deletes those (one interrupted, or made before this).
 * The outcome's position is the last append's.
 */
export async function deleteCustomer(
  deps: RelinkDeps,
  id: string,
  reason: string | null,
  meta: CommandMeta,
): Promise<CustomerOutcome & { relinked: RelinkOutcome | null }> {
  const outcome = await run(deps, id, meta, (s, at) => decideDelete(s, id, reason, at));
  const last = await deleteMergedInto(deps, outcome.state, meta);
  // Their reservations now show no customer: each records it (commands/reservations/relink.ts), also
  // when the deletion was made before (one interrupted, or made before this was recorded).
  const relinked =
    outcome.state.status === 'deleted' && outcome.state.restaurantId !== null
      ? await relinkDeletion(deps, outcome.state.restaurantId, id, meta)
      : null;
  const position = [outcome.position, last, relinked?.position ?? null].reduce<bigint | null>(
    (a, b) => (b !== null && (a === null || b > a) ? b : a),
    null,
  );
  return { ...outcome, position, relinked };
}

/**
 * The reservations of customers deleted with the customer they were merged into after that one's own
 * deletion (`deleteMergedAway` for a merge whose survivor was deleted between its two steps, and
 * `audit erase --pending`): they showed that customer and now show none, recorded as its deletion
 * records it (the same change: recorded once whichever path runs first).
 */
export async function relinkMergedAway(
  deps: RelinkDeps,
  merges: { absorbed: string; into: string }[],
  meta: CommandMeta,
): Promise<RelinkOutcome> {
  let out: RelinkOutcome = { relinked: 0, position: null, failed: 0, behind: false };
  for (const { absorbed, into } of merges) {
    const restaurantId = (await loadCustomer(deps, absorbed)).restaurantId;
    if (restaurantId === null) continue;
    out = addRelinks(out, await relinkDeletion(deps, restaurantId, into, meta, absorbed));
  }
  return out;
}

/**
 * Records on the reservations of `from` (the deleted customer by default) and of every customer merged
 * into it, at any depth, that they no longer show `deleted`, deleted: they show none.
 */
export async function relinkDeletion(
  deps: RelinkDeps,
  restaurantId: string,
  deleted: string,
  meta: CommandMeta,
  from: string = deleted,
): Promise<RelinkOutcome> {
  return relinkReservations(
    deps,
    {
      restaurantId,
      customerId: deleted,
      linked: await withMergedInto(deps, from),
      into: null,
      reason: 'CUSTOMER_DELETED',
    },
    meta,
  );
}

/**
 * `id` and every customer merged into it, at any depth (from the log): the ids a reservation showing
 * `id` may link, as it keeps the id it was made with.
 */
export async function withMergedInto(deps: WriteDeps, id: string): Promise<string[]> {
  const seen = new Set<string>([id]);
  const queue = [id];
  for (let next = queue.shift(); next !== undefined; next = queue.shift())
    for (const a of (await loadCustomer(deps, next)).absorbed)
      if (!seen.has(a)) {
        seen.add(a);
        queue.push(a);
      }
  return [...seen];
}

/** Deletes the customers merged into `state`'s customer, at any depth; the last append's position. */
export const deleteMergedInto = (deps: WriteDeps, state: CustomerState, meta: CommandMeta) =>
  deleteMergedAway(
    deps,
    state.absorbed.map((absorbed) => ({ absorbed, into: state.customerId as string })),
    meta,
  );

/**
 * Deletes each customer `absorbed` while it is merged into `into` (which is being or was deleted),
 * and the customers merged into it, at any depth; the last append's position.
 */
export async function deleteMergedAway(
  deps: WriteDeps,
  merges: { absorbed: string; into: string }[],
  meta: CommandMeta,
): Promise<bigint | null> {
  let last: bigint | null = null;
  const seen = new Set<string>();
  const queue = [...merges];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    if (seen.has(next.absorbed)) continue;
    seen.add(next.absorbed);
    const { into, absorbed } = next;
    const done = await run(deps, absorbed, meta, (s, at) => decideDeleteAbsorbed(s, into, at));
    if (done.position !== null && (last === null || done.position > last)) last = done.position;
    for (const a of done.state.absorbed) queue.push({ absorbed: a, into: absorbed });
  }
  return last;
}

/** A messaging channel's customer stays hidden from partners until published. */
export const flagCustomerDraft = (deps: WriteDeps, id: string, channel: string, meta: CommandMeta) =>
  run(deps, id, meta, (s, at) => decideFlagDraft(s, id, channel, at));

export const publishCustomerDraft = (deps: WriteDeps, id: string, meta: CommandMeta) =>
  run(deps, id, meta, (s, at) => decidePublishDraft(s, id, at));

export async function loadCustomer(deps: WriteDeps, id: string): Promise<CustomerState> {
  const events = await deps.events.readStream(customerStream(id));
  return events.reduce(evolveCustomer, initialCustomer);
}
