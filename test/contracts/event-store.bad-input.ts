// Inputs every adapter must refuse with InvalidEventStoreInputError, before writing anything.
// Casts are deliberate: these are the mistakes the type system cannot catch (JSON built at run
// time, values from outside) or that a caller makes with `as`.
import { randomUUID } from 'node:crypto';
import { ANY, type EventStore, type NewEvent, NO_STREAM } from '../../src/ports/event-store';

type Call = (store: EventStore) => unknown;

const ok = (n: number): NewEvent => ({ type: 'Fine', data: { n } });
const bad = (value: unknown): NewEvent[] => [ok(1), ok(2), value as NewEvent];
const withData = (data: unknown) => bad({ type: 'Bad', data });
const withMeta = (metadata: unknown) => bad({ type: 'Bad', data: {}, metadata });

class Money {
  constructor(readonly cents: number) {}
}

export function badAppends(stream: string): [string, Call][] {
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const deepCycle: Record<string, unknown> = { list: [] };
  (deepCycle.list as unknown[]).push({ back: deepCycle });
  const id = randomUUID();
  const append =
    (events: unknown, expected: unknown = ANY, s: unknown = stream) =>
    (store: EventStore) =>
      store.append(s as string, events as NewEvent[], expected as number);
  return [
    ['empty stream name', append([ok(1)], ANY, '')],
    ['stream name that is not a string', append([ok(1)], ANY, 42)],
    ['system stream name', append([ok(1)], ANY, '$all')],
    ['events not an array', append(ok(1))],
    ['no events', append([])],
    ['event that is not an object', append(bad('Created'))],
    ['type that is not a string', append(bad({ type: 42, data: {} }))],
    ['missing type', append(bad({ data: {} }))],
    ['empty type', append(bad({ type: '', data: {} }))],
    ['system type', append(bad({ type: '$metadata', data: {} }))],
    ['undefined data', append(withData(undefined))],
    ['null data', append(withData(null))],
    ['array data', append(withData([1, 2]))],
    ['string data', append(withData('text'))],
    ['function in data', append(withData({ f: () => 1 }))],
    ['bigint in data', append(withData({ amount: 10n }))],
    ['symbol in data', append(withData({ s: Symbol('x') }))],
    ['NaN in data', append(withData({ n: Number.NaN }))],
    ['Infinity in data', append(withData({ n: Number.POSITIVE_INFINITY }))],
    ['-Infinity deep in data', append(withData({ a: [{ b: Number.NEGATIVE_INFINITY }] }))],
    ['undefined in an array', append(withData({ list: [1, undefined] }))],
    ['sparse array', append(withData({ list: new Array(3) }))],
    ['cycle', append(withData(cycle))],
    ['cycle through an array', append(withData(deepCycle))],
    ['Date in data', append(withData({ at: new Date() }))],
    ['Map in data', append(withData({ m: new Map() }))],
    ['class instance in data', append(withData({ price: new Money(100) }))],
    ['metadata not an object', append(withMeta('meta'))],
    ['metadata key starting with $', append(withMeta({ $correlationId: 'x' }))],
    ['restaurant_id not a string', append(withMeta({ restaurant_id: 7 }))],
    ['actor not a string', append(withMeta({ actor: { id: 1 } }))],
    ['function in metadata', append(withMeta({ extra: () => 1 }))],
    ['id not a UUID', append(bad({ id: 'evt-1', type: 'Bad', data: {} }))],
    ['id not a string', append(bad({ id: 42, type: 'Bad', data: {} }))],
    [
      'same id twice in one append',
      append([
        { id, type: 'A', data: {} },
        { id, type: 'B', data: {} },
      ]),
    ],
    ['expected revision "3"', append([ok(1)], '3')],
    ['expected revision -1', append([ok(1)], -1)],
    ['expected revision 1.5', append([ok(1)], 1.5)],
    ['expected revision NaN', append([ok(1)], Number.NaN)],
    ['expected revision null', append([ok(1)], null)],
    ['expected revision undefined', (store) => store.append(stream, [ok(1)], undefined as unknown as number)],
    ['expected revision -1n', append([ok(1)], -1n)],
    ['expected revision as an object', append([ok(1)], { revision: 1 })],
    ['expected revision in another spelling', append([ok(1)], 'NO_STREAM')],
    ['a valid batch with a bad expected revision', append([ok(1)], `${NO_STREAM} `)],
  ];
}

export function badReads(stream: string): [string, Call][] {
  const drain = async (iterable: AsyncIterable<unknown>) => {
    for await (const _ of iterable) break;
  };
  return [
    ['readStream of an empty name', (s) => s.readStream('')],
    ['readStream of a system stream', (s) => s.readStream('$all')],
    ['fromRevision -1', (s) => s.readStream(stream, { fromRevision: -1 })],
    ['fromRevision "0"', (s) => s.readStream(stream, { fromRevision: '0' as unknown as number })],
    ['limit 1.5', (s) => s.readStream(stream, { limit: 1.5 })],
    ['direction sideways', (s) => s.readStream(stream, { direction: 'sideways' as 'forwards' })],
    ['readAll after -1n', (s) => drain(s.readAll({ after: -1n }))],
    ['readAll after "5"', (s) => drain(s.readAll({ after: '5' as unknown as bigint }))],
    ['readAll batchSize 0', (s) => drain(s.readAll({ batchSize: 0 }))],
    [
      'subscribe with prefixes that are not an array',
      (s) => s.subscribe({ streamPrefixes: 'a' as unknown as string[] }),
    ],
    ['subscribe after -5n', (s) => s.subscribe({ after: -5n })],
  ];
}
