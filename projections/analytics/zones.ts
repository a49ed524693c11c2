// The restaurants' time zones as the operations analytics need them (a delivery's or a call's day is
// the restaurant's local calendar day). Each projection keeps its own small collection of them, fed by
// the restaurant events, so it never reads another projection's documents.
import { localDateOf } from '../../commands/availability/zone-time';
import type { DocumentStore } from '../../src/ports/document-store';
import type { RecordedEvent } from '../../src/ports/event-store';
import { applyOnce } from '../../src/projection/idempotent';

export const ZONE_EVENT_TYPES = ['RestaurantCreated', 'RestaurantUpdated'] as const;

/** The time zone an event sets for its restaurant, if it sets one. */
export function zoneChange(
  event: Pick<RecordedEvent, 'type' | 'data'>,
): { restaurant_id: string; timezone: string } | null {
  const d = event.data as { restaurant_id?: string; timezone?: string; changes?: { timezone?: string } };
  const tz =
    event.type === 'RestaurantCreated'
      ? d.timezone
      : event.type === 'RestaurantUpdated'
        ? d.changes?.timezone
        : undefined;
  return typeof d.restaurant_id === 'string' && typeof tz === 'string'
    ? { restaurant_id: d.restaurant_id, timezone: tz }
    : null;
}

/** The local calendar day of an instant; UTC for a restaurant whose zone is unknown or not a zone. */
export function localDay(timezone: string | undefined, iso: string): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return iso.slice(0, 10);
  if (timezone) {
    try {
      return localDateOf(timezone, ms);
    } catch {
      // an invalid zone never reaches the log (commands validate it); stay readable if one did
    }
  }
  return new Date(ms).toISOString().slice(0, 10);
}

export async function applyZone(
  collection: string,
  event: RecordedEvent,
  docs: DocumentStore,
): Promise<void> {
  const z = zoneChange(event);
  if (!z) return;
  await applyOnce(
    docs.collection(collection),
    z.restaurant_id,
    event.position,
    { $set: { timezone: z.timezone } },
    { upsert: true },
  );
}

export async function zoneOf(
  collection: string,
  docs: DocumentStore,
  restaurantId: string,
): Promise<string | undefined> {
  const doc = await docs
    .collection<{ _id: string; timezone: string }>(collection)
    .findOne({ _id: restaurantId });
  return doc?.timezone;
}
