// The bytes of bodies held while they arrive (src/http/body-budget.ts): whatever the order of takes and gives,
// no client holds more than its bound, nothing more than the whole bound is held, a refused take holds
// nothing, and giving back every successful take leaves nothing held.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BODIES_IN_ALL, BODIES_PER_CLIENT, clientKey, createBodyBudget } from '../../src/http/body-budget';

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

test('a client at its bound is full before any of a new body is read; one below it is not', () => {
  const budget = createBodyBudget(LIMIT);
  assert.is(budget.full('a'), null, 'nothing arrived: nothing held');
  assert.is(budget.take('a', BODIES_PER_CLIENT * LIMIT - 1), null);
  assert.is(budget.full('a'), null);
  assert.is(budget.take('a', 1), null);
  assert.is(budget.full('a'), 'client');
  assert.is(budget.full('b'), null);
  budget.give('a', 1);
  assert.is(budget.full('a'), null);
});

test('an IPv6 client is its /56, an IPv4 one (mapped or not) its address', () => {
  assert.is(clientKey('2001:db8:1:2ff:5::1'), clientKey('2001:db8:1:200::9'));
  assert.is.not(clientKey('2001:db8:1:2ff::1'), clientKey('2001:db8:1:300::1'));
  assert.is(clientKey('2001:db8:1:2ab::1'), '2001:db8:1:200::/56');
  assert.is(clientKey('::ffff:192.0.2.7'), '192.0.2.7');
  assert.is(clientKey('192.0.2.7'), '192.0.2.7');
  assert.is(clientKey(''), 'unknown');
});

test.run();
