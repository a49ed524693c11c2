// A reservation external_id is unique within its restaurant (spec §4, DESIGN.md §1.3): a claim stream
// named after the value, taken by the reservation id. The original response is not replayed.
import { claim, release } from '../../src/core/claims';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError, conflict } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import { externalIdClaimStream } from './events';

const taken = (externalId: string) =>
  conflict(
    'A reservation with this external_id already exists in this restaurant; find it with GET /reservations?external_id=',
    {
      external_id: externalId,
    },
  );

/** Cheap early refusal (no write) before any capacity is held; the claim itself decides. */
export async function assertExternalIdFree(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  owner?: string,
) {
  const [last] = await deps.events.readStream(externalIdClaimStream(restaurantId, externalId), {
    direction: 'backwards',
    limit: 1,
  });
  if (last?.type === 'Claimed' && (last.data as { owner: string }).owner !== owner) throw taken(externalId);
}

export async function claimExternalId(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  reservationId: string,
  meta: CommandMeta,
) {
  try {
    return await claim(
      deps,
      externalIdClaimStream(restaurantId, externalId),
      reservationId,
      { ...meta, restaurant_id: restaurantId },
      'external_id',
    );
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) throw taken(externalId);
    throw err;
  }
}

export const releaseExternalId = (
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  reservationId: string,
  meta: CommandMeta,
) =>
  release(deps, externalIdClaimStream(restaurantId, externalId), reservationId, {
    ...meta,
    restaurant_id: restaurantId,
  });
