// The import's side of the match-key queue (src/customer-import/match-key-hold.ts): one taker past
// waiters per restaurant in this process, and keys granted to a thread whose job has ended let go.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { heldMatchKey, matchKeyHolds } from '../../commands/customers/upsert';
import { HeldForThread, ImportKeyHold } from '../../src/customer-import/match-key-hold';

test('a second import of one restaurant taking keys past waiters in this process is refused', async () => {
  const first = new ImportKeyHold('rest_one');
  assert.is(first.takeHere(first.fresh(['e:a'])), null);
  const second = new ImportKeyHold('rest_one');
  assert.throws(() => second.takeHere(second.fresh(['e:b'])), /wait in a circle/);
  // Nor through the main thread's side of an import thread.
  const refused = await new HeldForThread('rest_one').take(['e:c']).then(
    () => null,
    (err: unknown) => err,
  );
  assert.match(String(refused), /wait in a circle/);
  // Another restaurant's import is fine, and so is the next one once the first ended.
  const other = new ImportKeyHold('rest_two');
  assert.is(other.takeHere(other.fresh(['e:a'])), null);
  other.letGoAll();
  first.letGoAll();
  const next = new ImportKeyHold('rest_one');
  assert.is(next.takeHere(next.fresh(['e:b'])), null);
  next.letGoAll();
  assert.is(matchKeyHolds.size, 0);
});

test('keys granted to an import thread after its job ended are let go: nobody else would', async () => {
  const key = heldMatchKey('rest_three', 'p:33611223344');
  // A request holds the phone key.
  assert.is(matchKeyHolds.take([key]), null);
  const thread = new HeldForThread('rest_three');
  const taking = thread.take(['p:33611223344']);
  // The thread dies while its take waits: the job ends.
  thread.end();
  // The request lets go: the thread's take is granted, to a job that has ended.
  matchKeyHolds.release([key]);
  await taking;
  assert.is(matchKeyHolds.size, 0, 'let go at once');
  assert.is(matchKeyHolds.take([key]), null, 'free for the next request');
  matchKeyHolds.release([key]);
});

test('the import knows when a request waits for one of its keys (it then does not give way to requests)', async () => {
  const hold = new ImportKeyHold('rest_four');
  assert.is(hold.takeHere(hold.fresh(['e:a', 'p:1'])), null);
  assert.is(hold.waitedFor(), false);
  // A request for another key of the restaurant, and one of another restaurant's same key: not ours.
  assert.is(matchKeyHolds.take([heldMatchKey('rest_four', 'e:b')]), null);
  const notOurs = matchKeyHolds.take([heldMatchKey('rest_four', 'e:b')]);
  assert.is(hold.waitedFor(), false);
  const request = matchKeyHolds.take([heldMatchKey('rest_four', 'p:1'), heldMatchKey('rest_four', 'e:c')]);
  assert.ok(request);
  assert.is(hold.waitedFor(), true);
  hold.letGoAll();
  await request;
  assert.is(hold.waitedFor(), false);
  matchKeyHolds.release([heldMatchKey('rest_four', 'p:1'), heldMatchKey('rest_four', 'e:c')]);
  matchKeyHolds.release([heldMatchKey('rest_four', 'e:b')]);
  await notOurs;
  matchKeyHolds.release([heldMatchKey('rest_four', 'e:b')]);
  assert.is(matchKeyHolds.size, 0);
});

test.run();
