import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { FixedClock } from '../../src/core/clock';
import { NO_STREAM } from '../../src/ports/event-store';
import { eventStoreContract } from '../contracts/event-store.contract';
import { ev } from '../contracts/event-store.helpers';

const test = suite('event-store: memory');

eventStoreContract(test, { open: () => new MemoryEventStore() }, { fresh: true, strictIds: true });

test('created comes from the injected clock', async () => {
  const clock = new FixedClock('2026-03-01T12:00:00Z');
  const store = new MemoryEventStore({ clock });
  await store.append('s', [ev('A')], NO_STREAM);
  clock.advance(60);
  await store.append('s', [ev('B')], 0);
  const events = await store.readStream('s');
  assert.equal(
    events.map((e) => e.created),
    ['2026-03-01T12:00:00.000Z', '2026-03-01T12:01:00.000Z'],
  );
});

test('a reader mutating what it read cannot change the log', async () => {
  const store = new MemoryEventStore();
  const data = { items: [1, 2] };
  await store.append('s', [ev('A', data)], NO_STREAM);
  data.items.push(3);
  const [first] = await store.readStream('s');
  (first!.data.items as number[]).push(4);
  const [again] = await store.readStream('s');
  assert.equal(again!.data, { items: [1, 2] });
});

test.run();
