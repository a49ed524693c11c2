// POST /reservations (spec §4): every check first, writes after, in an order where a crash at any
// point leaves nothing held for good.
//   1. references, the customer (check only: a refused reservation writes no customer), the
//      external_id (early refusal, no write), then what the catalog alone decides: the room a shift
//      requires, the discount's rules;
//   2. claim the external_id for the new reservation id: of concurrent creates with one external_id,
//      the losers answer 409 here, before any of them takes a table (a loser holding a table, even
//      briefly, could make another request answer 422 NO_TABLE);
//   3. hold the seating on the day's capacity stream (the recheck: no overbooking), then find or
//      create the customer — a failure in 3 releases what 2 and 3 took before answering;
//   4. append ReservationCreated (deterministic event id). If the process dies before this, it leaves
//      a claim (and maybe a seating) with no reservation: the repair job, which finds both through the
//      `seating_sync` read model, fences the reservation stream and then releases the seating and the
//      claim (repair.ts); a create reaching 4 after the fence is refused (409).

import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { BusinessRuleError } from '../../src/core/errors';
import { newId } from '../../src/core/ids';
import { distinctInOrder } from '../../src/core/text';
import { loadCatalog } from '../catalog/handler';
import type { Catalog } from '../catalog/types';
import { releaseSeating } from './capacity-handler';
import {
  checkReservationCustomer,
  type ReservationCustomerInput,
  type ReservationDeps,
  type ReservationRestaurant,
  resolveReservationCustomer,
} from './customer-link';
import { type CreateInput, decideCreate, type InitialStatus } from './decide-create';
import { assertArrivalNotTooEarly } from './decide-status';
import { assertDiscountApplies } from './discount-rules';
import type { ReservationSource } from './events';
import { reservationStream } from './events';
import { evolveReservation, initialReservation, type ReservationState } from './evolve';
import { assertExternalIdFree, claimExternalId, releaseExternalId } from './external-id';
import { catalogRefusal, type HeldSeating, holdSeating, type SeatingRequest } from './hold';

export interface CreateReservationRequest {
  party_size: number;
  start_at: string;
  shift_id?: string;
  room_id?: string | null;
  table_ids?: string[];
  external_id?: string;
  source?: ReservationSource;
  customer?: ReservationCustomerInput | null;
  send_client_notifications?: boolean;
  send_payment_link?: boolean;
  total_amount_paid?: number;
  initial_status?: InitialStatus;
  bypass_availability?: boolean;
  bypass_approval?: boolean;
  bypass_payments?: boolean;
  custom_message?: string | null;
  allergies?: string | null;
  metadata?: Record<string, unknown>;
  tags?: string[];
  attached_files?: string[];
  discount_id?: string | null;
  prescriber_id?: string | null;
  is_table_definitive?: boolean;
  send_followup_email?: boolean;
}

/** Discount and prescriber ids must be this restaurant's. */
export function checkReferences(
  catalog: Catalog,
  req: { discount_id?: string | null; prescriber_id?: string | null },
) {
  if (req.discount_id && !catalog.discounts.some((d) => d.id === req.discount_id))
    throw new BusinessRuleError('UNKNOWN_DISCOUNT', 'No discount of this restaurant has this discount_id');
  if (req.prescriber_id && !catalog.prescribers.some((p) => p.id === req.prescriber_id))
    throw new BusinessRuleError(
      'UNKNOWN_PRESCRIBER',
      'No prescriber of this restaurant has this prescriber_id',
    );
}

export async function createReservation(
  deps: ReservationDeps,
  restaurant: ReservationRestaurant,
  req: CreateReservationRequest,
  meta: CommandMeta,
) {
  const now = deps.clock.now();
  const at = now.toISOString();
  const rmeta = { ...meta, restaurant_id: restaurant._id };
  const catalog = await loadCatalog(deps, restaurant._id);
  checkReferences(catalog, req);
  if (req.initial_status) assertArrivalNotTooEarly(req.start_at, req.initial_status, now);
  const customer = req.customer ?? null;
  if (customer) await checkReservationCustomer(deps, restaurant, customer);
  const externalId = req.external_id ?? null;
  if (externalId) await assertExternalIdFree(deps, restaurant._id, externalId);

  const reservationId = newId('res');
  const seatingRequest: SeatingRequest = {
    restaurantId: restaurant._id,
    timezone: restaurant.timezone,
    catalog,
    reservationId,
    externalId,
    startMs: Date.parse(req.start_at),
    partySize: req.party_size,
    shiftId: req.shift_id ?? null,
    roomId: req.room_id ?? null,
    tableIds: req.table_ids ?? null,
    force: req.bypass_availability === true,
    purpose: 'create',
    now,
  };
  // Refusals that need no capacity stream come before anything is claimed or held.
  const refused = catalogRefusal(seatingRequest);
  if (refused) throw refused;
  if (req.discount_id)
    assertDiscountApplies(catalog.discounts, req.discount_id, seatingRequest.startMs, restaurant.timezone);

  let claimed = false;
  let held: HeldSeating | null = null;
  let customerId: string | null = null;
  try {
    if (externalId)
      claimed = (await claimExternalId(deps, restaurant._id, externalId, reservationId, meta)).taken;
    held = await holdSeating(deps, seatingRequest, rmeta);
    if (customer)
      customerId = (await resolveReservationCustomer(deps, restaurant, customer, meta)).customerId;
  } catch (err) {
    // Refused after the claim (no table, a customer conflict…): give back what was taken before
    // answering. Should this fail too, the repair job releases them later.
    if (held)
      await releaseSeating(
        deps,
        restaurant._id,
        held.seating.service_date,
        reservationId,
        'CREATE_REFUSED',
        rmeta,
      );
    if (claimed && externalId) await releaseExternalId(deps, restaurant._id, externalId, reservationId, meta);
    throw err;
  }

  const input: CreateInput = {
    reservationId,
    restaurantId: restaurant._id,
    externalId,
    seating: held.seating,
    source: req.source ?? 'WEBSITE',
    customerId,
    currency: restaurant.currency,
    requiresApproval: held.shift.requires_approval,
    deposit: held.shift.deposit,
    initialStatus: req.initial_status ?? null,
    bypassApproval: req.bypass_approval === true,
    bypassPayments: req.bypass_payments === true,
    forceInserted: req.bypass_availability === true,
    sendClientNotifications: req.send_client_notifications ?? true,
    sendPaymentLink: req.send_payment_link ?? true,
    totalAmountPaid: req.total_amount_paid ?? 0,
    customMessage: req.custom_message ?? null,
    allergies: req.allergies ?? null,
    metadata: req.metadata ?? {},
    tags: distinctInOrder(req.tags ?? []),
    attachedFiles: distinctInOrder(req.attached_files ?? []),
    discountId: req.discount_id ?? null,
    prescriberId: req.prescriber_id ?? null,
    isTableDefinitive: req.is_table_definitive ?? false,
    sendFollowupEmail: req.send_followup_email ?? false,
  };
  const outcome = await runCommand<ReservationState>(deps.events, {
    stream: reservationStream(reservationId),
    initial: initialReservation,
    evolve: evolveReservation,
    decide: (s) => decideCreate(s, input, at),
    metadata: rmeta,
    clock: deps.clock,
  });
  return { ...outcome, reservationId };
}
