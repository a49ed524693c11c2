// The bodies being received at once (src/http/body-budget.ts): whatever the order of takes and gives,
// no client holds more than its bound, nothing more than the whole bound is held, a refused take holds
// nothing, and giving back every successful take leaves nothing held.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BODIES_IN_ALL,
  BODIES_PER_CLIENT,
  bodyReservation,
  createBodyBudget,
} from '../../src/http/body-budget';

const LIMIT = 100;

test('bounds hold per client and in all, and everything given back leaves nothing held', () => {
  const step = fc.record({
    client: fc.constantFrom('a', 'b', 'c', 'd'),
    bytes: fc.integer({ min: 0, max: LIMIT }),
    give: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(step, { maxLength: 400 }), (steps) => {
      const budget = createBodyBudget(LIMIT);
      const taken: { client: string; bytes: number }[] = [];
      for (const s of steps) {
        if (s.give && taken.length) {
          const t = taken.shift() as { client: string; bytes: number };
          budget.give(t.client, t.bytes);
        } else {
          const before = budget.held();
          const refused = budget.take(s.client, s.bytes);
          if (refused) assert.is(budget.held(), before, 'a refusal holds nothing');
          else taken.push({ client: s.client, bytes: s.bytes });
        }
        for (const c of ['a', 'b', 'c', 'd']) assert.ok(budget.held(c) <= BODIES_PER_CLIENT * LIMIT);
        assert.ok(budget.held() <= BODIES_IN_ALL * LIMIT);
      }
      for (const t of taken) budget.give(t.client, t.bytes);
      assert.is(budget.held(), 0);
      for (const c of ['a', 'b', 'c', 'd']) assert.is(budget.held(c), 0);
    }),
  );
});

test('a client at its bound is refused as a client; the whole bound refuses everyone', () => {
  const budget = createBodyBudget(LIMIT);
  for (let i = 0; i < BODIES_PER_CLIENT; i++) assert.is(budget.take('a', LIMIT), null);
  assert.is(budget.take('a', 1), 'client');
  assert.is(budget.take('b', LIMIT), null, 'another client is not held by it');
  const all = createBodyBudget(LIMIT);
  for (let i = 0; i < BODIES_IN_ALL; i++) assert.is(all.take(`c${i}`, LIMIT), null);
  assert.is(all.take('newcomer', 1), 'all');
});

test('a body reserves its declared length, or the limit when chunked, compressed or longer', () => {
  assert.is(bodyReservation('10', undefined, LIMIT), 10);
  assert.is(bodyReservation('10', 'identity', LIMIT), 10);
  assert.is(bodyReservation('500', undefined, LIMIT), LIMIT);
  assert.is(bodyReservation(undefined, undefined, LIMIT), LIMIT);
  assert.is(bodyReservation('10', 'gzip', LIMIT), LIMIT);
  assert.is(bodyReservation('1e3', undefined, LIMIT), LIMIT);
});

test.run();
