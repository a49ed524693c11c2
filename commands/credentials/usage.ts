// When a credential (an API key or an OAuth token) was last used, coarsely and off the request path:
// `ApiKeyUsed` on the stream `apikey-usage-<id>` (beside the key's own stream, so recording a use never
// conflicts with a rename or a revocation), at most once per key per USAGE_RESOLUTION_MS. The time a
// key shows as "last used" is therefore the first use of its latest hour-long window: the key's most
// recent use lies within the hour after it. Read models are rebuilt from the log, so it survives a restart.
import type { CommandMeta } from '../../src/core/command-meta';
import type { WriteDeps } from '../../src/core/write-deps';
import { ANY } from '../../src/ports/event-store';

/** One recorded use per key and hour at most. */
export const USAGE_RESOLUTION_MS = 60 * 60 * 1000;

export const apiKeyUsageStream = (keyId: string) => `apikey-usage-${keyId}`;

export interface ApiKeyUsedData {
  key_id: string;
  restaurant_id: string;
  /** The service clock at the use recorded. */
  at: string;
}

/**
 * Pure: should a use at `nowMs` be recorded, given the last use recorded (or being recorded) at
 * `lastMs` (null: never)? A clock that went back (a restored server) records again rather than never.
 */
export function usageDue(lastMs: number | null, nowMs: number): boolean {
  if (lastMs === null || !Number.isFinite(lastMs)) return true;
  return nowMs - lastMs >= USAGE_RESOLUTION_MS || nowMs < lastMs;
}

/** Appends one `ApiKeyUsed` (no read of the stream: the decision was made from usageDue). */
export async function recordApiKeyUse(
  deps: WriteDeps,
  key: { _id: string; restaurant_id: string },
  at: Date,
  meta: CommandMeta,
) {
  const data: ApiKeyUsedData = { key_id: key._id, restaurant_id: key.restaurant_id, at: at.toISOString() };
  return deps.events.append(
    apiKeyUsageStream(key._id),
    [
      {
        type: 'ApiKeyUsed',
        data: data as unknown as Record<string, unknown>,
        metadata: { ...meta, restaurant_id: key.restaurant_id },
      },
    ],
    ANY,
  );
}
