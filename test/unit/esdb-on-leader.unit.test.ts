// The EventStoreDB adapter's reads that require the leader: one that reached a follower ("not leader",
// after which the client reconnects to the leader) is tried once more, not failed as a 500.
import { ErrorType } from '@eventstore/db-client';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { onLeader } from '../../src/adapters/event-store/eventstoredb';

const notLeader = () => Object.assign(new Error('not leader'), { type: ErrorType.NOT_LEADER });

test('a read that reached a follower is tried once more', async () => {
  let calls = 0;
  const got = await onLeader(async () => {
    if (++calls === 1) throw notLeader();
    return 'events';
  });
  assert.is(got, 'events');
  assert.is(calls, 2);
});

test('a second "not leader", or any other error, is the answer', async () => {
  let calls = 0;
  const twice = await onLeader(async () => {
    calls++;
    throw notLeader();
  }).catch((e: unknown) => e);
  assert.is((twice as { type?: string }).type, ErrorType.NOT_LEADER);
  assert.is(calls, 2);
  calls = 0;
  const other = await onLeader(async () => {
    calls++;
    throw new Error('stream deleted');
  }).catch((e: unknown) => e);
  assert.is((other as Error).message, 'stream deleted');
  assert.is(calls, 1, 'other errors are not retried');
});

test.run();
