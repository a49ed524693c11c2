// Status commands: the partner's cancel, the restaurant-side operations and the automatic changes.
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { decidePartnerCancel, decideStatusOperation, type StatusOperation } from './decide-status';
import { releaseIfEnded, runOnReservation, type Tenant } from './handler-common';

/** POST /reservations/{id}/cancel. A repeat returns the reservation as it is, first reason kept. */
export async function cancelReservation(
  deps: WriteDeps,
  restaurantId: string,
  id: string,
  reason: string | null,
  meta: CommandMeta,
) {
  const outcome = await runOnReservation(deps, id, restaurantId, meta, (r, now) =>
    decidePartnerCancel(r, reason, now.toISOString()),
  );
  const released = await releaseIfEnded(deps, outcome.state.r, meta);
  return { ...outcome, position: maxPosition(outcome.position, released?.position ?? null) };
}

/** Approve, reject, seat, leave, staff or customer cancellation, finished, no-show. */
export async function changeStatus(
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  op: StatusOperation,
  meta: CommandMeta,
) {
  const outcome = await runOnReservation(deps, id, tenant, meta, (r, now) =>
    decideStatusOperation(r, op, now),
  );
  const released = await releaseIfEnded(deps, outcome.state.r, meta);
  return { ...outcome, position: maxPosition(outcome.position, released?.position ?? null) };
}

export const maxPosition = (a: bigint | null, b: bigint | null): bigint | null =>
  a === null ? b : b === null ? a : a > b ? a : b;
