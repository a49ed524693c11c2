// Status commands: the partner's cancel, the restaurant-side operations and the automatic changes.
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { resumeSeating } from './capacity-handler';
import { decidePartnerCancel, decideStatusOperation, type StatusOperation } from './decide-status';
import { loadReservation, runOnReservation, settleSeating, type Tenant } from './handler-common';

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
  const settled = await settleSeating(deps, outcome.state.r, meta);
  return { ...outcome, position: maxPosition(outcome.position, settled?.position ?? null) };
}

/** Approve, reject, seat, leave, staff or customer cancellation, finished, no-show. */
export async function changeStatus(
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  op: StatusOperation,
  meta: CommandMeta,
) {
  // A no-show seated after all holds its tables to the end again first (or 422 NO_TABLE when they
  // were sold meanwhile): the status never shows guests at a table the reservation does not hold.
  const resumed = await resumeIfSeated(deps, tenant, id, op, meta);
  let outcome: Awaited<ReturnType<typeof runOnReservation>>;
  try {
    outcome = await runOnReservation(deps, id, tenant, meta, (r, now) => decideStatusOperation(r, op, now));
  } catch (err) {
    // Refused (a concurrent change): what was held again is given back to what the reservation shows.
    if (resumed) await settleSeating(deps, (await loadReservation(deps, id)).r, meta);
    throw err;
  }
  const settled = await settleSeating(deps, outcome.state.r, meta);
  return { ...outcome, position: maxPosition(outcome.position, settled?.position ?? null) };
}

/** Seating (or partially seating) a NO_SHOW reservation: its ended seating held again, checked. */
async function resumeIfSeated(
  deps: WriteDeps,
  tenant: Tenant,
  id: string,
  op: StatusOperation,
  meta: CommandMeta,
): Promise<boolean> {
  if (op.kind !== 'seat' && op.kind !== 'partially_seat') return false;
  const r = (await loadReservation(deps, id)).r;
  if (r?.status !== 'NO_SHOW' || (tenant !== null && r.restaurant_id !== tenant)) return false;
  const { appended } = await resumeSeating(deps, r.restaurant_id, r.service_date, r.reservation_id, {
    ...meta,
    restaurant_id: r.restaurant_id,
  });
  return appended.length > 0;
}

export const maxPosition = (a: bigint | null, b: bigint | null): bigint | null =>
  a === null ? b : b === null ? a : a > b ? a : b;
