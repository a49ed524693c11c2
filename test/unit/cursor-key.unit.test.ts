// The feeds' cursor key of a restaurant: reading it never writes (it was appended to the log on a
// restaurant's first read, so that read answered 503 on a full disk), it is the same in every process
// sharing the secrets key and differs between restaurants, and a key an earlier version put in the log
// is kept (the cursors partners hold stay good).
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  cursorKeyStream,
  customerCursorKeys,
  REFUSAL_REREAD_MS,
  withCustomerCursorKeys,
} from '../../commands/customers/cursor-key';
import { decodeCursor, encodeCursor } from '../../queries/customer-cursor';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { ApiError } from '../../src/core/errors';
import { NO_STREAM } from '../../src/ports/event-store';
import { SecretBox } from '../../src/secrets';

/** The key new cursors are signed with (the logged one if any, else the derived one). */
const signingKey = async (...a: Parameters<typeof customerCursorKeys>) =>
  (await customerCursorKeys(...a)).sign;

const t = suite('customer cursor key');

t(
  'a restaurant without a key in the log gets one derived from the secrets key, appending nothing',
  async () => {
    const secret = randomBytes(32);
    const events = new MemoryEventStore();
    const key = await signingKey({ events, secrets: new SecretBox(secret) }, 'rest_a');
    assert.is(key.length, 32);
    assert.is(await events.headPosition(), null, 'nothing appended');
    // Another process (its own store handle and box, the same secrets key) reads the same key.
    const elsewhere = await signingKey(
      { events: new MemoryEventStore(), secrets: new SecretBox(Buffer.from(secret)) },
      'rest_a',
    );
    assert.ok(elsewhere.equals(key));
    const other = await signingKey({ events, secrets: new SecretBox(secret) }, 'rest_b');
    assert.not.ok(other.equals(key), 'each restaurant has its own');
    assert.not.ok(key.equals(secret), 'not the secrets key itself');
    const otherSecret = await signingKey(
      { events: new MemoryEventStore(), secrets: new SecretBox(randomBytes(32)) },
      'rest_a',
    );
    assert.not.ok(otherSecret.equals(key));
  },
);

t('a key an earlier version appended to the log is the one used', async () => {
  const events = new MemoryEventStore();
  const logged = randomBytes(32);
  await events.append(
    cursorKeyStream('rest_a'),
    [
      {
        type: 'CustomerCursorKeyGenerated',
        data: { restaurant_id: 'rest_a', key: logged.toString('base64url'), at: '2026-01-01T00:00:00.000Z' },
        metadata: { actor: 'system:customers', restaurant_id: 'rest_a' },
      },
    ],
    NO_STREAM,
  );
  const key = await signingKey({ events, secrets: new SecretBox(randomBytes(32)) }, 'rest_a');
  assert.ok(key.equals(logged));
});

// What a process of the earlier version appended on a restaurant's first feed read.
const logKey = (events: MemoryEventStore, restaurantId: string, key: Buffer) =>
  events.append(
    cursorKeyStream(restaurantId),
    [
      {
        type: 'CustomerCursorKeyGenerated',
        data: { restaurant_id: restaurantId, key: key.toString('base64url'), at: '2026-01-01T00:00:00.000Z' },
        metadata: { actor: 'system:customers', restaurant_id: restaurantId },
      },
    ],
    NO_STREAM,
  );

const payload = { restaurant_id: 'rest_a', after: 7, filters: {} };
const readWith = (deps: Parameters<typeof customerCursorKeys>[0], cursor: string) =>
  withCustomerCursorKeys(deps, 'rest_a', async (keys) => decodeCursor(keys, cursor, 'rest_a'));

t(
  'rolling upgrade: a cursor signed with the derived key still verifies once an older process logs a key',
  async () => {
    const secret = randomBytes(32);
    const events = new MemoryEventStore();
    const clock = new FixedClock('2026-11-27T12:00:00Z');
    const newer = { events, secrets: new SecretBox(secret), clock };
    // The new process signs with the derived key (nothing logged yet) ...
    const cursor = encodeCursor(await customerCursorKeys(newer, 'rest_a'), payload);
    // ... then an old process, which read no key, logs one of its own.
    const logged = randomBytes(32);
    await logKey(events, 'rest_a', logged);
    clock.advance(3600);
    assert.equal((await readWith(newer, cursor)).after, 7, 'the same process, after it sees the logged key');
    // A process started after the key was logged (a restart) signs with the logged key, verifies both.
    const restarted = { events: new MemoryEventStore(), secrets: new SecretBox(secret), clock };
    await logKey(restarted.events, 'rest_a', logged);
    const keys = await customerCursorKeys(restarted, 'rest_a');
    assert.ok(keys.sign.equals(logged));
    assert.equal((await readWith(restarted, cursor)).after, 7, 'a derived-key cursor after a restart');
    assert.equal((await readWith(restarted, encodeCursor(logged, payload))).after, 7);
  },
);

t(
  'rolling upgrade: a cursor an older process signed with the key it logged verifies on a newer one that cached none',
  async () => {
    const secret = randomBytes(32);
    const events = new MemoryEventStore();
    const clock = new FixedClock('2026-11-27T12:00:00Z');
    const newer = { events, secrets: new SecretBox(secret), clock };
    const derived = await signingKey(newer, 'rest_a'); // caches "nothing logged"
    const logged = randomBytes(32);
    await logKey(events, 'rest_a', logged);
    const oldCursor = encodeCursor(logged, payload);
    clock.advance(REFUSAL_REREAD_MS / 1000);
    assert.equal((await readWith(newer, oldCursor)).after, 7, 're-read the log before refusing');
    assert.ok((await signingKey(newer, 'rest_a')).equals(logged), 'now signs with the logged key');
    assert.equal(
      (await readWith(newer, encodeCursor(derived, payload))).after,
      7,
      'and still verifies the derived',
    );
    // A forged cursor is still refused (and costs no more than one read per span).
    try {
      await readWith(newer, encodeCursor(randomBytes(32), payload));
      assert.unreachable('forged cursor accepted');
    } catch (e) {
      assert.instance(e, ApiError);
      assert.is((e as ApiError).status, 400);
    }
  },
);

t('a refused cursor re-reads the log at most once per span per restaurant', async () => {
  const events = new MemoryEventStore();
  let reads = 0;
  const read = events.readStream.bind(events);
  events.readStream = ((...a: Parameters<typeof read>) => {
    reads++;
    return read(...a);
  }) as typeof events.readStream;
  const clock = new FixedClock('2026-11-27T12:00:00Z');
  const deps = { events, secrets: new SecretBox(randomBytes(32)), clock };
  const forged = encodeCursor(randomBytes(32), payload);
  for (let i = 0; i < 5; i++) await readWith(deps, forged).catch(() => undefined);
  assert.is(reads, 1, 'the first read only, within the span');
  clock.advance(REFUSAL_REREAD_MS / 1000);
  for (let i = 0; i < 5; i++) await readWith(deps, forged).catch(() => undefined);
  assert.is(reads, 2, 'one more after it');
});

t.run();
