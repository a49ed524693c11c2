// Restaurant-side records on a reservation: feedback, payments, the POS service lock, the waiter.
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { decideFeedback, decidePayment, type FeedbackInput, type PaymentInput } from './decide-records';
import { decideLocks, decideWaiter, type LockableField } from './decide-update';
import { runOnReservation, type Tenant } from './handler-common';

export const recordFeedback = (
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  input: FeedbackInput,
  meta: CommandMeta,
) => runOnReservation(deps, id, tenant, meta, (r, now) => decideFeedback(r, input, now.toISOString()));

export const recordPayment = (
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  input: PaymentInput,
  currency: string,
  meta: CommandMeta,
) =>
  runOnReservation(deps, id, tenant, meta, (r, now) => decidePayment(r, input, currency, now.toISOString()));

/** Replaces the set of fields the POS locks (an empty list clears the lock). */
export const setPosLock = (
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  fields: LockableField[],
  meta: CommandMeta,
) => runOnReservation(deps, id, tenant, meta, (r, now) => decideLocks(r, fields, now.toISOString()));

export const assignWaiter = (
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  waiter: { id: string; name: string } | null,
  meta: CommandMeta,
) => runOnReservation(deps, id, tenant, meta, (r, now) => decideWaiter(r, waiter, now.toISOString()));
