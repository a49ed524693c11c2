// audit history of a missed call: its own stream, and the two events of it written elsewhere: the
// external call id's claim (naming the call in `owner`) and the outbox message (on
// `message-outbox-<call id>.<attempt>`, naming it only in its idempotency key). Both were left out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { loadSubject } from '../../src/audit/history';
import { eventNames } from '../../src/audit/subjects';
import { ANY } from '../../src/ports/event-store';
import { ev } from '../contracts/event-store.helpers';

const meta = { actor: 'credential:key_1', restaurant_id: 'rest_1' };

test('a missed call’s history holds its claim and its outbox message', async () => {
  const events = new MemoryEventStore();
  const put = (stream: string, type: string, data: Record<string, unknown>) =>
    events.append(stream, [ev(type, data, meta)], ANY);
  await put('missed-call-external-call-rest_1-call-1', 'Claimed', { owner: 'mc_1', at: 'x' });
  await put('missed-call-mc_1', 'MissedCallReported', { missed_call_id: 'mc_1', restaurant_id: 'rest_1' });
  await put('message-outbox-mc_1.1', 'OutboxMessageRecorded', {
    outbox_message_id: 'outbox_mc_1.1',
    idempotency_key: 'mc_1.1',
    restaurant_id: 'rest_1',
  });
  await put('missed-call-mc_1', 'MessageSent', { missed_call_id: 'mc_1', restaurant_id: 'rest_1' });
  // Another call whose id the first one's begins with: not its events.
  await put('message-outbox-mc_10.1', 'OutboxMessageRecorded', { idempotency_key: 'mc_10.1' });
  await put('missed-call-external-call-rest_1-call-2', 'Claimed', { owner: 'mc_10', at: 'x' });
  const loaded = await loadSubject(events, 'mc_1');
  assert.equal(
    loaded.events.map((e) => [e.stream, e.type]),
    [
      ['missed-call-external-call-rest_1-call-1', 'Claimed'],
      ['missed-call-mc_1', 'MissedCallReported'],
      ['message-outbox-mc_1.1', 'OutboxMessageRecorded'],
      ['missed-call-mc_1', 'MessageSent'],
    ],
  );
});

test('a stream named after an id with a suffix other than an attempt number does not name it', () => {
  const e = (stream: string) =>
    ({ stream, data: {}, type: 'X', metadata: {}, id: '', created: '', revision: 0, position: 1n }) as never;
  assert.ok(eventNames(e('message-outbox-mc_1.12'), 'mc_1'));
  assert.not.ok(eventNames(e('message-outbox-mc_1.x'), 'mc_1'));
  assert.not.ok(eventNames(e('message-outbox-mc_1.'), 'mc_1'));
});

test.run();
