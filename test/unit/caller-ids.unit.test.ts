// Caller ids (src/privacy/caller-ids.ts): what names a caller's cooldown stream instead of their number.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { callerStream } from '../../commands/missed-calls/events';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { callerHash, callerId, callerKeySubject } from '../../src/privacy/caller-ids';

const e164 = fc
  .tuple(fc.integer({ min: 1, max: 9 }), fc.stringMatching(/^\d{6,14}$/))
  .map(([a, b]) => `+${a}${b}`);

test('a caller id is 22 base64url characters, the same for the same number and key, and holds no digit run of the number', () => {
  const key = randomBytes(32);
  fc.assert(
    fc.property(e164, (phone) => {
      const id = callerHash(key, phone);
      assert.match(id, /^[A-Za-z0-9_-]{22}$/);
      assert.is(callerHash(key, phone), id);
      assert.not.ok(id.includes(phone.slice(-6)), 'no tail of the number');
      assert.not.ok(callerStream('rest_a', id).includes(phone));
    }),
  );
});

test('different numbers, or another key, give different ids', () => {
  const key = randomBytes(32);
  const other = randomBytes(32);
  fc.assert(
    fc.property(e164, e164, (a, b) => {
      if (a !== b) assert.is.not(callerHash(key, a), callerHash(key, b));
      assert.is.not(callerHash(key, a), callerHash(other, a));
    }),
  );
});

test('the key is per restaurant, kept in the key store, and stable across calls', async () => {
  const keys = new MemoryKeyStore();
  const a1 = await callerId(keys, 'rest_a', '+33612345678');
  const a2 = await callerId(keys, 'rest_a', '+33612345678');
  const b = await callerId(keys, 'rest_b', '+33612345678');
  assert.is(a1, a2);
  assert.is.not(a1, b);
  const found = await keys.find(callerKeySubject('rest_a'));
  assert.is(found.state, 'active');
  // Another process (no cache) reading the same key store names the caller the same.
  assert.is(callerHash((found as { key: Buffer }).key, '+33612345678'), a1);
});

test.run();
