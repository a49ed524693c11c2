// Instants written before whole-minute offsets (937b913) read as formatInstant writes them today.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { formatInstant, offsetAt } from '../../commands/availability/zone-time';
import { canonicalInstant, upcastLegacyInstants } from '../../commands/reservations/legacy-instants';
import type { RecordedEvent } from '../../src/ports/event-store';

const t = suite('legacy instants');

/** formatInstant as it was before 937b913: the offset in minutes as luxon gives it, fractions too. */
function formatBefore937b913(zone: string, ms: number): string {
  const o = offsetAt(zone, ms);
  const local = new Date(ms + o * 60_000).toISOString().slice(0, 19);
  const abs = Math.abs(o);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${o < 0 ? '-' : '+'}${hh}:${mm}`;
}

t('the texts of the issue read as the same instants, in RFC 3339', () => {
  assert.is(
    formatBefore937b913('Europe/Paris', Date.parse('1900-01-01T18:00:00Z')),
    '1900-01-01T18:09:21+00:9.35',
  );
  assert.is(canonicalInstant('1900-01-01T18:09:21+00:9.35'), '1900-01-01T18:09:00+00:09');
  assert.is(canonicalInstant('1960-06-01T11:15:30-00:44.5'), '1960-06-01T11:16:00-00:44');
  // Written since, or anything else: unchanged.
  for (const text of ['2026-06-03T19:00:00+02:00', '1900-01-01T18:09:00+00:09', 'not an instant', ''])
    assert.is(canonicalInstant(text), text);
});

t('property: what was written before reads as what is written now, local mean times included', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(
        'Europe/Paris',
        'Africa/Monrovia',
        'Europe/Amsterdam',
        'Europe/Dublin',
        'Asia/Kolkata',
        'Pacific/Chatham',
        'America/New_York',
        'Australia/Sydney',
      ),
      fc.integer({
        min: Date.parse('1800-01-01T00:00:00Z') / 60_000,
        max: Date.parse('2100-01-01T00:00:00Z') / 60_000,
      }),
      (zone, minute) =>
        canonicalInstant(formatBefore937b913(zone, minute * 60_000)) === formatInstant(zone, minute * 60_000),
    ),
    { numRuns: 5000 },
  );
});

const event = (type: string, data: Record<string, unknown>): RecordedEvent => ({
  id: '00000000-0000-4000-8000-000000000000',
  type,
  data,
  metadata: {},
  created: '2026-06-02T09:00:00.000Z',
  stream: 's',
  revision: 0,
  position: 1n,
});

t('events: the instants of creations, moves and seatings; nothing else is touched', () => {
  const old = { start_at: '1900-01-01T18:09:21+00:9.35', end_at: '1900-01-01T19:39:21+00:9.35' };
  const now = { start_at: '1900-01-01T18:09:00+00:09', end_at: '1900-01-01T19:39:00+00:09' };
  const created = upcastLegacyInstants(
    event('ReservationCreated', { at: 'x', reservation: { id: 'r', ...old } }),
  );
  assert.equal(created.data, { at: 'x', reservation: { id: 'r', ...now } });
  const moved = upcastLegacyInstants(
    event('ReservationUpdated', { changes: old, previous: { party_size: 2 } }),
  );
  assert.equal(moved.data, { changes: now, previous: { party_size: 2 } });
  for (const type of ['SeatingHeld', 'SeatingMoveHeld', 'SeatingMoveConfirmed'])
    assert.equal(upcastLegacyInstants(event(type, { table_ids: ['a'], ...old })).data, {
      table_ids: ['a'],
      ...now,
    });
  // The same object when nothing is to change: events written since, and other types.
  const current = event('SeatingHeld', { ...now });
  assert.is(upcastLegacyInstants(current), current);
  const other = event('CustomerUpdated', { changes: old });
  assert.is(upcastLegacyInstants(other), other);
  // The event read is never changed in place (read models may share it).
  const frozen = event('ReservationUpdated', Object.freeze({ changes: Object.freeze({ ...old }) }));
  assert.equal(upcastLegacyInstants(frozen).data, { changes: now });
  assert.equal(frozen.data, { changes: old });
});

t.run();
