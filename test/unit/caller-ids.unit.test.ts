// Caller ids (src/privacy/caller-ids.ts): what names a caller's cooldown stream instead of their number.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IN_FLIGHT_MS } from '../../commands/missed-calls/decide';
import { callerStream } from '../../commands/missed-calls/events';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { KeyDestroyedError } from '../../src/ports/key-store';
import {
  CALLER_PERIOD_MS,
  callerHash,
  callerIdsFrom,
  callerKeySubject,
  callerPeriod,
  destroyExpiredCallerKeys,
  legacyCallerKeySubject,
  periodCallerId,
} from '../../src/privacy/caller-ids';

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

const PHONE = '+33612345678';
/** 10:00 UTC on a day: 4 h into the 06:00–12:00 period. */
const MID = new Date('2026-06-02T10:00:00Z');
const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

test('the key is per restaurant and period, kept in the key store, and stable within the period', async () => {
  const keys = new MemoryKeyStore();
  const ids = callerIdsFrom(keys);
  const p = callerPeriod(MID);
  const a1 = (await ids.slots('rest_a', PHONE, MID)).take;
  const a2 = (await ids.slots('rest_a', PHONE, plus(MID, 60 * 60_000))).take;
  const b = (await ids.slots('rest_b', PHONE, MID)).take;
  const later = (await ids.slots('rest_a', PHONE, plus(MID, CALLER_PERIOD_MS))).take;
  assert.is(a1, a2, 'same period');
  assert.is.not(a1, b, 'another restaurant');
  assert.is.not(later, a1, 'the next period');
  assert.match(a1, new RegExp(`^p${p}-[A-Za-z0-9_-]{22}$`));
  const found = await keys.find(callerKeySubject('rest_a', p));
  assert.is(found.state, 'active');
  // Another process (no cache) reading the same key store names the caller the same.
  assert.is(periodCallerId(p, callerHash((found as { key: Buffer }).key, PHONE)), a1);
});

test('earlier: the previous period and the legacy id, only while their key lives; next: only near the turn', async () => {
  const keys = new MemoryKeyStore();
  const ids = callerIdsFrom(keys);
  const first = await ids.slots('rest_a', PHONE, MID);
  assert.equal(first.earlier, [], 'no key made for the previous period: nothing to read');
  assert.is(first.next, null);
  const afterTurn = plus(MID, CALLER_PERIOD_MS);
  assert.equal((await ids.slots('rest_a', PHONE, afterTurn)).earlier, [first.take]);
  const legacy = await keys.obtain(legacyCallerKeySubject('rest_a'));
  assert.equal((await ids.slots('rest_a', PHONE, afterTurn)).earlier, [
    first.take,
    callerHash(legacy, PHONE),
  ]);
  // The last IN_FLIGHT_MS of the period: the next period's id is claimed too.
  const end = (callerPeriod(MID) + 1) * CALLER_PERIOD_MS;
  const nearEnd = await ids.slots('rest_a', PHONE, new Date(end - IN_FLIGHT_MS));
  assert.is(nearEnd.take, first.take);
  assert.is(nearEnd.next, (await ids.slots('rest_a', PHONE, new Date(end))).take);
  assert.is((await ids.slots('rest_a', PHONE, new Date(end - IN_FLIGHT_MS - 1))).next, null);
  // held: every live id around now.
  assert.equal(await ids.held('rest_a', PHONE, MID), [first.take, nearEnd.next, callerHash(legacy, PHONE)]);
});

test('the sweep destroys the keys of periods two back and older (and the legacy key when asked), idempotently', async () => {
  const keys = new MemoryKeyStore();
  const ids = callerIdsFrom(keys);
  const p = callerPeriod(MID);
  for (let k = 0; k < 4; k++) await ids.slots('rest_a', PHONE, plus(MID, -k * CALLER_PERIOD_MS));
  await keys.obtain(legacyCallerKeySubject('rest_a'));
  const first = await destroyExpiredCallerKeys(keys, ['rest_a', 'rest_b'], MID, {
    from: p - 10,
    legacy: false,
  });
  assert.equal(first, { destroyed: 2, through: p - 2 });
  assert.is((await keys.find(callerKeySubject('rest_a', p - 3))).state, 'destroyed');
  assert.is((await keys.find(callerKeySubject('rest_a', p - 2))).state, 'destroyed');
  assert.is((await keys.find(callerKeySubject('rest_a', p - 1))).state, 'active', 'still read this period');
  assert.is((await keys.find(callerKeySubject('rest_a', p))).state, 'active');
  assert.is((await keys.find(legacyCallerKeySubject('rest_a'))).state, 'active');
  assert.equal(await destroyExpiredCallerKeys(keys, ['rest_a'], MID, { from: p - 10, legacy: false }), {
    destroyed: 0,
    through: p - 2,
  });
  const later = plus(MID, 2 * CALLER_PERIOD_MS);
  assert.equal(await destroyExpiredCallerKeys(keys, ['rest_a'], later, { from: p - 1, legacy: true }), {
    destroyed: 3,
    through: p,
  });
  assert.equal((await ids.slots('rest_a', PHONE, later)).earlier, [], 'nothing left to read but this period');
  // A destroyed period's ids can never be made again: obtaining its key is refused.
  const refused = await keys.obtain(callerKeySubject('rest_a', p - 1)).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(refused, KeyDestroyedError);
});

test.run();
