// The reservation's customer, through the customers module (spec §4). `{id}` links an existing customer
// of this restaurant; inline details find or create one (commands/customers/inline.ts). Checking never
// writes, so a reservation refused by any check creates or updates no customer; writing happens only
// once the seating is held (POST) or the reservation's change has landed (PATCH).
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError, BusinessRuleError, type Issue } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import type { DocumentStore } from '../../src/ports/document-store';
import { blacklistedError } from '../customers/blacklisted-match';
import type { ProfileInput } from '../customers/bounds';
import { type CustomerRestaurant, loadCustomer, updateCustomer, writeContext } from '../customers/handler';
import {
  checkInlineCustomer,
  type InlineCustomer,
  type OnMatch,
  resolveInlineCustomer,
} from '../customers/inline';
import { prepareChanges } from '../customers/prepare';
import type { ReservationSnapshot } from './events';

/**
 * Matching an inline customer looks up candidates in the customers read model (the blacklist flag
 * itself is read from the customer's stream), so these commands also need the document store, and
 * read-your-writes: the next match of the same guest waits until the read models show this one's write.
 */
export type ReservationDeps = WriteDeps & {
  docs: DocumentStore;
  settle(position: bigint | null): Promise<unknown>;
};

export type ReservationCustomerInput = ProfileInput & { id?: string; on_match?: OnMatch };

/** What the reservation commands know of the caller's restaurant. */
export interface ReservationRestaurant {
  _id: string;
  timezone: string;
  currency: string;
  country_code: string | null;
  customer_matching: boolean;
}

const blacklisted = () => blacklistedError();

/** An existing, visible, not blacklisted customer of this restaurant (read from its stream). */
export async function checkLinkedCustomer(deps: WriteDeps, restaurantId: string, id: string): Promise<void> {
  const c = await loadCustomer(deps, id);
  if (c.status !== 'active' || c.restaurantId !== restaurantId || c.draft)
    throw new BusinessRuleError('CUSTOMER_NOT_FOUND', `customer ${id} is not a customer of this restaurant`);
  if (c.blacklisted) throw blacklisted();
}

const inlineOf = (input: ReservationCustomerInput): InlineCustomer => {
  const { id: _id, on_match: _m, ...details } = input;
  return details as InlineCustomer;
};

/**
 * The customers module names a faulty field from the customer's own fields (`phone_number`); in a
 * reservation request it is under `customer` (`customer.phone_number`).
 */
async function asCustomerFields<T>(check: () => Promise<T> | T): Promise<T> {
  try {
    return await check();
  } catch (err) {
    const issues = err instanceof ApiError ? (err.details?.issues as Issue[] | undefined) : undefined;
    if (!Array.isArray(issues)) throw err;
    throw new ApiError(
      (err as ApiError).status,
      (err as ApiError).code,
      (err as ApiError).message,
      {
        ...(err as ApiError).details,
        issues: issues.map((i) => ({ ...i, path: i.path ? `customer.${i.path}` : 'customer' })),
      },
      (err as ApiError).headers,
    );
  }
}

/** POST: checks the customer without writing anything. */
export async function checkReservationCustomer(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  input: ReservationCustomerInput,
): Promise<void> {
  if (input.id !== undefined) return checkLinkedCustomer(deps, restaurant._id, input.id);
  const plan = await asCustomerFields(() =>
    checkInlineCustomer(deps, deps.docs, restaurant, inlineOf(input), input.on_match),
  );
  if (plan.blacklisted) throw blacklisted();
}

/**
 * After the seating is held (POST) or the reservation's change has landed (PATCH): the customer id to
 * record (found, updated or created). `settled`: the PATCH's reservation change has landed, so the
 * customer part is no longer refused (handler-update.ts): a match blacklisted since the check is
 * connected (the blacklisting came after the PATCH was decided) with nothing written to it.
 */
export async function resolveReservationCustomer(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant & Pick<CustomerRestaurant, 'customer_fields'>,
  input: ReservationCustomerInput,
  meta: CommandMeta,
  settled = false,
): Promise<{ customerId: string; position: bigint | null }> {
  if (input.id !== undefined) {
    // Checked before the seating was held; checked again now, on the customer's own stream.
    await checkLinkedCustomer(deps, restaurant._id, input.id);
    return { customerId: input.id, position: null };
  }
  const resolved = await resolveInlineCustomer(
    deps,
    deps.docs,
    restaurant,
    inlineOf(input),
    input.on_match,
    meta,
  );
  // Blacklisted since the check: nothing was written for them, and the reservation is refused.
  if (resolved.blacklisted && !settled) throw blacklisted();
  return { customerId: resolved.customerId, position: resolved.position };
}

/** PATCH: what the `customer` property asks for, checked and planned before anything is written. */
export type CustomerChange =
  | { kind: 'none' }
  | { kind: 'disconnect'; customerId: null }
  | { kind: 'connect'; customerId: string }
  | { kind: 'update_linked'; customerId: string; input: ProfileInput; restaurant: WithFields }
  | { kind: 'create'; input: ReservationCustomerInput; restaurant: WithFields };

/**
 * The restaurant with the custom field definitions the plan checked the details against: the write
 * that follows the reservation's change checks them against the same ones, so a definition changed
 * in between cannot refuse it then.
 */
type WithFields = ReservationRestaurant & Pick<CustomerRestaurant, 'customer_fields'>;

async function withFields(
  deps: WriteDeps,
  restaurant: ReservationRestaurant,
  input: ProfileInput,
): Promise<WithFields> {
  return { ...restaurant, customer_fields: (await writeContext(deps, restaurant, input)).definitions };
}

export async function planCustomerChange(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  r: ReservationSnapshot,
  input: ReservationCustomerInput | null | undefined,
): Promise<CustomerChange> {
  if (input === undefined) return { kind: 'none' };
  if (input === null)
    return r.customer_id === null ? { kind: 'none' } : { kind: 'disconnect', customerId: null };
  if (input.id !== undefined) {
    if (input.id === r.customer_id) return { kind: 'none' };
    await checkLinkedCustomer(deps, restaurant._id, input.id);
    return { kind: 'connect', customerId: input.id };
  }
  if (r.customer_id !== null) {
    const linked = await loadCustomer(deps, r.customer_id);
    // A draft is hidden from partners (the reservation shows no customer): as if nobody were linked.
    if (
      linked.status === 'active' &&
      linked.restaurantId === restaurant._id &&
      linked.profile &&
      !linked.draft
    ) {
      // Validate now (400 / 422) so a refused change writes nothing anywhere. Details the customer
      // already has change nothing (and so touch no POS lock on the customer).
      const { profile } = linked;
      const fixed = await withFields(deps, restaurant, input);
      const context = await writeContext(deps, fixed, input);
      const { changes } = await asCustomerFields(() => prepareChanges(profile, input, context));
      if (Object.keys(changes).length === 0) return { kind: 'none' };
      return { kind: 'update_linked', customerId: r.customer_id, input, restaurant: fixed };
    }
  }
  // Nobody (still) linked: a name creates and connects one, found or created like POST's inline details.
  if (input.name === undefined)
    throw new BusinessRuleError(
      'CUSTOMER_NAME_REQUIRED',
      'No customer is linked to this reservation: give a name to create one, or {id} to connect one',
    );
  const fixed = await withFields(deps, restaurant, input);
  await checkReservationCustomer(deps, fixed, input);
  return { kind: 'create', input, restaurant: fixed };
}

/**
 * PATCH: writes what the plan says; customerId when the link changes. `settled`: the reservation's
 * change has landed (handler-update.ts), and the customer part completes it rather than refuse it: a
 * linked customer deleted or merged away since the plan (another request, another process) is left
 * as that made it, as if the PATCH had come first.
 */
export async function writeCustomerChange(
  deps: ReservationDeps,
  change: CustomerChange,
  meta: CommandMeta,
  settled: boolean,
): Promise<{ customerId?: string; position: bigint | null }> {
  switch (change.kind) {
    case 'update_linked':
      try {
        const out = await updateCustomer(deps, change.restaurant, change.customerId, change.input, meta);
        return { position: out.position };
      } catch (err) {
        if (settled && err instanceof ApiError && err.status === 404) return { position: null };
        throw err;
      }
    case 'create':
      return resolveReservationCustomer(deps, change.restaurant, change.input, meta, settled);
    default:
      return { position: null };
  }
}
