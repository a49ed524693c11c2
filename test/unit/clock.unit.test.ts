import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AdjustableClock, FixedClock } from '../../src/core/clock';

test('a fixed clock moves only when advanced', () => {
  const clock = new FixedClock('2026-01-01T00:00:00Z');
  assert.is(clock.now().toISOString(), '2026-01-01T00:00:00.000Z');
  clock.advance(90);
  assert.is(clock.now().toISOString(), '2026-01-01T00:01:30.000Z');
});

test('an adjustable clock adds its offset to the base clock', () => {
  const base = new FixedClock('2026-01-01T00:00:00Z');
  const clock = new AdjustableClock(base);
  clock.advance(3600);
  assert.is(clock.now().toISOString(), '2026-01-01T01:00:00.000Z');
});

test.run();
