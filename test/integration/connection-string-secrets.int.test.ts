// A store that cannot be reached is named in the error without the password its connection string
// carries: the message reaches stderr ("failed to start: …") and the operator's logs. Before, "cannot
// reach EventStoreDB at esdb://admin:changeit@…" printed EVENTSTORE_URL's password as it was given.
// No container is needed: nothing listens on port 1.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EsdbEventStore } from '../../src/adapters/event-store/eventstoredb';

test('an EventStoreDB that cannot be reached: named without its user and password', async () => {
  const err = await EsdbEventStore.connect('esdb://admin:s3cr3t-pw@127.0.0.1:1?tls=false', {
    connectTimeoutMs: 200,
  }).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err, 'connect failed');
  assert.not.match(String(err?.message), 's3cr3t-pw');
  assert.match(String(err?.message), 'cannot reach EventStoreDB at esdb://***@127.0.0.1:1?tls=false');
});

test.run();
