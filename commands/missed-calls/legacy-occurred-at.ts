// Calls stored before commit 745d2f3 with an `occurred_at` outside years 0001-9998 (UTC). The input
// rule now refuses them (400 out_of_range), but the route once took any RFC 3339 text: year 0000 with
// a positive offset is an instant of year -1, stored as "-000001-12-31T10:00:00.000Z", and a late
// offset on 9999-12-31 one of year 10000, "+010000-01-01T13:59:59.000Z". Neither is an RFC 3339
// date-time (every list page holding one failed its documented format), and as text they sort before
// every other instant (the list's order and its occurred_at filters compare text).
//
// The log is append-only, so such events stay as they are; every reader (the write side's fold, the
// read models, the analytics, `audit history`/`as-of`) gets them through the sealing layer
// (src/privacy/sealing-event-store.ts) with the instant moved to the nearest one the input rule
// accepts: 0001-01-01T00:00:00.000Z for one before year 1, 9998-12-31T23:59:59.999Z for one from
// year 10000 (a year-9999 call is a valid date-time that sorts last: read as stored) (so the list's order and filters keep the call where it was: first or last). The call's
// outcome is unchanged (a call from year -1 was SKIPPED_TOO_OLD, and still reads as such). `audit
// export` shows the event as stored.
import { SERVICE_INSTANTS } from '../../src/core/limits';
import type { RecordedEvent } from '../../src/ports/event-store';

export const EARLIEST_OCCURRED_AT = new Date(SERVICE_INSTANTS.fromMs).toISOString();
export const LATEST_OCCURRED_AT = new Date(SERVICE_INSTANTS.toMs - 1).toISOString();

/**
 * A stored occurred_at as the current code could have written it: the text itself when it is a
 * four-digit year's (what toISOString writes for years 0000-9999), else the nearest accepted instant.
 * Year 0000 itself (before 0001) reads as the earliest too.
 */
export function canonicalOccurredAt(text: string): string {
  const c = text.charCodeAt(0);
  // A digit first: a four-digit year; "0000-" only for year 0, before the range.
  if (c >= 48 && c <= 57 && !text.startsWith('0000-')) return text;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return text;
  if (ms < SERVICE_INSTANTS.fromMs) return EARLIEST_OCCURRED_AT;
  if (ms >= SERVICE_INSTANTS.toMs) return LATEST_OCCURRED_AT;
  return text;
}

/** The event itself (the same object) unless it is a MissedCallReported whose occurred_at needs it. */
export function upcastOccurredAt(event: RecordedEvent): RecordedEvent {
  if (event.type !== 'MissedCallReported') return event;
  const text = event.data.occurred_at;
  if (typeof text !== 'string') return event;
  const fixed = canonicalOccurredAt(text);
  if (fixed === text) return event;
  // Key by key (CONTRIBUTING: no spread copy that then changes).
  const data: Record<string, unknown> = {};
  for (const k of Object.keys(event.data)) data[k] = k === 'occurred_at' ? fixed : event.data[k];
  return { ...event, data };
}
