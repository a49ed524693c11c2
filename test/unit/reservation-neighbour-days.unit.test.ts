// When a hold reads the neighbouring service days' seatings (commands/reservations/hold.ts,
// seatsAcrossMidnight): only when a seating of some shift can cross a midnight around the day, in
// the restaurant's zone with its DST changes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Shift } from '../../commands/catalog/types';
import { seatsAcrossMidnight } from '../../commands/reservations/hold';

const t = suite('reservations: seatings that may cross midnight');

const shift = (
  start: string,
  end: string,
  minutes: number,
  rules: Shift['durations_by_party_size'] = [],
): Shift => ({
  id: `s_${start}_${end}`,
  name: 'S',
  start_time: start,
  end_time: end,
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  slot_interval_minutes: 30,
  duration_minutes: minutes,
  durations_by_party_size: rules,
  max_covers: null,
  min_party_size: 1,
  max_party_size: null,
  requires_room_selection: false,
  requires_approval: false,
  deposit: null,
  booking_window_days: null,
  minimum_notice_minutes: 0,
});

t(
  'a dinner ending before midnight: its own day only; a later or longer one, or a shift past midnight: the days around',
  () => {
    assert.is(seatsAcrossMidnight([shift('19:00', '22:00', 90)], 'Europe/Paris', '2026-06-10'), false);
    assert.is(
      seatsAcrossMidnight([shift('19:00', '22:00', 120)], 'Europe/Paris', '2026-06-10'),
      false,
      'ends at 24:00',
    );
    assert.is(seatsAcrossMidnight([shift('19:00', '22:00', 121)], 'Europe/Paris', '2026-06-10'), true);
    assert.is(
      seatsAcrossMidnight(
        [shift('19:00', '22:00', 90, [{ max_party_size: 20, duration_minutes: 150 }])],
        'Europe/Paris',
        '2026-06-10',
      ),
      true,
      'the longest duration rule counts',
    );
    assert.is(seatsAcrossMidnight([shift('23:00', '00:30', 60)], 'Europe/Paris', '2026-06-10'), true);
  },
);

t(
  'a DST change before midnight (Nuuk, 27 March 2027: 23:00 becomes 00:00) pushes a 22:30 seating past it',
  () => {
    const late = [shift('19:00', '22:30', 60)];
    assert.is(seatsAcrossMidnight(late, 'America/Nuuk', '2027-03-20'), false);
    assert.is(seatsAcrossMidnight(late, 'America/Nuuk', '2027-03-27'), true);
    // The next day's seatings meet the 27th's: the day before counts too.
    assert.is(seatsAcrossMidnight(late, 'America/Nuuk', '2027-03-28'), true);
    assert.is(seatsAcrossMidnight(late, 'America/Nuuk', '2027-03-29'), false);
  },
);

t.run();
