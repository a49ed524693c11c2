// The feeds' cursor key of a restaurant: reading it never writes (it was appended to the log on a
// restaurant's first read, so that read answered 503 on a full disk), it is the same in every process
// sharing the secrets key and differs between restaurants, and a key an earlier version put in the log
// is kept (the cursors partners hold stay good).
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cursorKeyStream, customerCursorKey } from '../../commands/customers/cursor-key';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
import { SecretBox } from '../../src/secrets';

const t = suite('customer cursor key');

t(
  'a restaurant without a key in the log gets one derived from the secrets key, appending nothing',
  async () => {
    const secret = randomBytes(32);
    const events = new MemoryEventStore();
    const key = await customerCursorKey({ events, secrets: new SecretBox(secret) }, 'rest_a');
    assert.is(key.length, 32);
    assert.is(await events.headPosition(), null, 'nothing appended');
    // Another process (its own store handle and box, the same secrets key) reads the same key.
    const elsewhere = await customerCursorKey(
      { events: new MemoryEventStore(), secrets: new SecretBox(Buffer.from(secret)) },
      'rest_a',
    );
    assert.ok(elsewhere.equals(key));
    const other = await customerCursorKey({ events, secrets: new SecretBox(secret) }, 'rest_b');
    assert.not.ok(other.equals(key), 'each restaurant has its own');
    assert.not.ok(key.equals(secret), 'not the secrets key itself');
    const otherSecret = await customerCursorKey(
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
  const key = await customerCursorKey({ events, secrets: new SecretBox(randomBytes(32)) }, 'rest_a');
  assert.ok(key.equals(logged));
});

t.run();
