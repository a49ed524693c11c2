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

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether `p` has settled once the pending callbacks have run (a turn of the event loop). */
async function settledYet(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await turn();
  return settled;
}

test('an import whose job ends while its take waits lets go of nothing it was not granted, and of the late grant at once', async () => {
  const phone = heldMatchKey('rest_five', 'p:1');
  const email = heldMatchKey('rest_five', 'e:a');
  // A request (POST /customers) holds the phone key.
  assert.is(matchKeyHolds.take([phone]), null);
  const hold = new ImportKeyHold('rest_five');
  const taking = hold.takeHere(hold.fresh(['p:1', 'e:a']));
  assert.ok(taking, 'waits for the request');
  // The job ends meanwhile.
  hold.letGoAll();
  assert.is(
    await settledYet(taking),
    false,
    "the request's key is not handed to the import while it holds it",
  );
  assert.is(hold.waitedFor(), false);
  // The request lets go: the import's take is granted, to a job that has ended.
  matchKeyHolds.release([phone]);
  await taking;
  assert.is(matchKeyHolds.size, 0, 'let go at once');
  // The next request for the guest's email or phone is not blocked.
  assert.is(matchKeyHolds.take([email, phone]), null, 'free for the next request');
  matchKeyHolds.release([email, phone]);
});

test('a key let go while it is being taken is let go once granted, and only then', async () => {
  const phone = heldMatchKey('rest_six', 'p:1');
  const email = heldMatchKey('rest_six', 'e:a');
  assert.is(matchKeyHolds.take([phone]), null);
  const hold = new ImportKeyHold('rest_six');
  const taking = hold.takeHere(hold.fresh(['p:1', 'e:a']));
  assert.ok(taking);
  hold.letGo(['p:1']);
  assert.is(
    await settledYet(taking),
    false,
    "the request's key is not handed to the import while it holds it",
  );
  matchKeyHolds.release([phone]);
  await taking;
  // The phone key was let go on its grant; the email key is the import's until it lets it go.
  assert.is(matchKeyHolds.take([phone]), null, 'the phone key is free');
  matchKeyHolds.release([phone]);
  const request = matchKeyHolds.take([email]);
  assert.ok(request, 'the email key is still held');
  hold.letGoAll();
  await request;
  matchKeyHolds.release([email]);
  assert.is(matchKeyHolds.size, 0);
});

test("a second import refused its keys does not let go of the first import's at its end", async () => {
  const key = heldMatchKey('rest_seven', 'e:a');
  const first = new ImportKeyHold('rest_seven');
  assert.is(first.takeHere(first.fresh(['e:a'])), null);
  const second = new ImportKeyHold('rest_seven');
  assert.throws(() => second.takeHere(second.fresh(['e:a', 'e:b'])), /wait in a circle/);
  // The second job fails: its end lets go of nothing it holds (nothing).
  second.letGoAll();
  const request = matchKeyHolds.take([key]);
  assert.ok(request, "the first import's key is still held");
  first.letGoAll();
  await request;
  matchKeyHolds.release([key]);
  assert.is(matchKeyHolds.size, 0);
});

test("in the import's thread: keys are let go there only once the main thread has granted them", () => {
  const letGoThere: string[][] = [];
  const hold = new ImportKeyHold('rest_eight', (keys) => letGoThere.push(keys));
  const asked = hold.fresh(['p:1', 'e:a']);
  assert.equal(asked, ['p:1', 'e:a']);
  // Asked for again while the question is in flight: not taken twice.
  assert.equal(hold.fresh(['p:1', 'e:b']), ['e:b']);
  // The job ends before the main thread answered: nothing to let go there (not granted yet).
  hold.letGoAll();
  assert.equal(letGoThere, []);
  // The answer arrives anyway: the keys, now held there for an ended job, are let go at once.
  hold.granted(asked);
  assert.equal(letGoThere, [['p:1', 'e:a']]);
});

test.run();
