// A store that cannot be reached is named in the error without the password its connection string
// carries: the message reaches stderr ("failed to start: …") and the operator's logs. Before, "cannot
// reach EventStoreDB at esdb://admin:changeit@…" printed EVENTSTORE_URL's password as it was given.
// No container is needed: nothing listens on port 1.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EsdbEventStore } from '../../src/adapters/event-store/eventstoredb';
import { withoutPassword } from '../../src/core/urls';

test('an EventStoreDB that cannot be reached: named with its user, never its password', async () => {
  const err = await EsdbEventStore.connect('esdb://admin:s3cr3t-pw@127.0.0.1:1?tls=false', {
    connectTimeoutMs: 200,
  }).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err, 'connect failed');
  assert.not.match(String(err?.message), 's3cr3t-pw');
  assert.match(String(err?.message), 'cannot reach EventStoreDB at esdb://admin:***@127.0.0.1:1?tls=false');
});

test('withoutPassword: the password of any URL-like string is masked, the rest kept', () => {
  for (const [given, shown] of [
    ['esdb://admin:changeit@db:2113?tls=false', 'esdb://admin:***@db:2113?tls=false'],
    ['esdb+discover://u:p%40ss@a:2113,b:2113', 'esdb+discover://u:***@a:2113,b:2113'],
    [
      'mongodb://user:pw@h1:27017,h2:27017/db?authSource=admin',
      'mongodb://user:***@h1:27017,h2:27017/db?authSource=admin',
    ],
    ['mongodb+srv://user@cluster.example/db', 'mongodb+srv://user@cluster.example/db'],
    ['esdb://db:2113?tls=false', 'esdb://db:2113?tls=false'],
    ['not a url', 'not a url'],
  ] as const)
    assert.is(withoutPassword(given), shown, given);
});

test.run();
