// Instants written before whole-minute offsets (commit 937b913). formatInstant then wrote a zone's
// offset as luxon gives it, in fractional minutes for local mean times (Paris +00:09:21 before 1911,
// Monrovia -00:44:30 until 1972): a start at 18:00Z in 1900 in Paris was stored as
// "1900-01-01T18:09:21+00:9.35", which is not RFC 3339 (Date.parse reads NaN). The log is
// append-only, so such events stay as they are; the read side reads them as what formatInstant writes
// today for the same instant (the offset rounded to the minute, the local time read at it), through
// the sealing layer every reader uses (src/privacy/sealing-event-store.ts). Exports keep the stored
// text (the log as it is).
import type { RecordedEvent } from '../../src/ports/event-store';

/** What formatInstant writes: 2026-05-01T19:00:00+02:00 (always 25 characters). */
const CANONICAL_LENGTH = 25;
/** What it wrote with a fractional offset: a minute part with a decimal point ("+00:9.35", "-00:44.5"). */
const FRACTIONAL = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})([+-])(\d{2}):(\d{1,2}(?:\.\d+)?(?:e-?\d+)?)$/;
const MINUTE = 60_000;

/**
 * The instant text as formatInstant writes it now, for one written with a fractional-minute offset;
 * anything else unchanged. The stored local time was cut to the second (toISOString().slice(0, 19))
 * after adding the fractional offset, so it reads up to a second early: the instant is the next
 * whole second (zone offsets are whole seconds, and so were the starts written).
 */
export function canonicalInstant(text: string): string {
  if (text.length === CANONICAL_LENGTH) return text;
  const m = FRACTIONAL.exec(text);
  if (m === null) return text;
  const offset = (m[2] === '-' ? -1 : 1) * (Number(m[3]) * 60 + Number(m[4]));
  const local = Date.parse(`${m[1]}Z`);
  if (!Number.isFinite(offset) || Number.isNaN(local)) return text;
  const ms = Math.ceil(Math.round(local - offset * MINUTE) / 1000) * 1000;
  const o = Math.round(offset);
  const abs = Math.abs(o);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${new Date(ms + o * MINUTE).toISOString().slice(0, 19)}${o < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** A copy of `o` with start_at/end_at made canonical, or `o` itself when both already are. */
function withCanonical<T>(o: T): T {
  if (typeof o !== 'object' || o === null) return o;
  const r = o as Record<string, unknown>;
  const start = typeof r.start_at === 'string' ? canonicalInstant(r.start_at) : r.start_at;
  const end = typeof r.end_at === 'string' ? canonicalInstant(r.end_at) : r.end_at;
  if (start === r.start_at && end === r.end_at) return o;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(r)) out[k] = k === 'start_at' ? start : k === 'end_at' ? end : r[k];
  return out as T;
}

/** Event types whose data carries instants written by formatInstant, and where. */
const WHERE = new Map<string, readonly (string | null)[]>([
  ['ReservationCreated', ['reservation']],
  ['ReservationUpdated', ['changes', 'previous']],
  // A seating's fields are the data itself.
  ['SeatingHeld', [null]],
  ['SeatingMoveHeld', [null]],
  ['SeatingMoveConfirmed', [null]],
]);

/**
 * The event as the current code would have written it: instants with fractional-minute offsets
 * (written before 937b913) made canonical. The event itself (same object) when nothing changes, which
 * is every event written since.
 */
export function upcastLegacyInstants(event: RecordedEvent): RecordedEvent {
  const where = WHERE.get(event.type);
  if (where === undefined) return event;
  let data = event.data;
  for (const field of where) {
    if (field === null) data = withCanonical(data);
    else {
      const part = data[field];
      const fixed = withCanonical(part);
      if (fixed !== part) {
        const copy: Record<string, unknown> = {};
        for (const k of Object.keys(data)) copy[k] = k === field ? fixed : data[k];
        data = copy;
      }
    }
  }
  return data === event.data ? event : { ...event, data };
}
