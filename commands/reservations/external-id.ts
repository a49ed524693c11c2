// A reservation external_id is unique within its restaurant (spec §4, DESIGN.md §1.3): a claim stream
// named after the value, taken by the reservation id. The original response is not replayed.
import { claim, release } from '../../src/core/claims';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError, conflict } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import { externalIdClaimStream, legacyExternalIdClaimStream } from './events';

const taken = (externalId: string) =>
  conflict(
    'A reservation with this external_id already exists in this restaurant; find it with GET /reservations?external_id=',
    {
      external_id: externalId,
    },
  );

/**
 * The reservation holding `externalId` under the claim's former name (events.ts
 * legacyExternalIdClaimStream), when that claim is this restaurant's; else null.
 */
export async function legacyExternalIdOwner(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
): Promise<string | null> {
  const legacy = legacyExternalIdClaimStream(restaurantId, externalId);
  if (legacy === null) return null;
  const [last] = await deps.events.readStream(legacy, { direction: 'backwards', limit: 1 });
  if (last?.type !== 'Claimed' || last.metadata.restaurant_id !== restaurantId) return null;
  return (last.data as { owner: string }).owner;
}

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
  const earlier = await legacyExternalIdOwner(deps, restaurantId, externalId);
  if (earlier !== null && earlier !== owner) throw taken(externalId);
}

export async function claimExternalId(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  reservationId: string,
  meta: CommandMeta,
) {
  // A claim under the former name still holds the value until released (legacy streams get no new claims).
  const earlier = await legacyExternalIdOwner(deps, restaurantId, externalId);
  if (earlier !== null && earlier !== reservationId) throw taken(externalId);
  if (earlier === reservationId) return { taken: false, position: null };
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

/** Frees the value (under either name) if `reservationId` holds it; the position of the last release written. */
export async function releaseExternalId(
  deps: WriteDeps,
  restaurantId: string,
  externalId: string,
  reservationId: string,
  meta: CommandMeta,
): Promise<bigint | null> {
  const m = { ...meta, restaurant_id: restaurantId };
  const legacy = legacyExternalIdClaimStream(restaurantId, externalId);
  const earlier =
    legacy !== null && (await legacyExternalIdOwner(deps, restaurantId, externalId)) === reservationId
      ? await release(deps, legacy, reservationId, m)
      : null;
  return (await release(deps, externalIdClaimStream(restaurantId, externalId), reservationId, m)) ?? earlier;
}
