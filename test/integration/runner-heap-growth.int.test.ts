// The runner's replay of a backlog (src/projection/heap-growth.ts, src/projection/intern.ts): the
// heap's growth is capped from the first full batch of a catch-up through the write-back cache to
// its end, errors included; a catch-up of less than a batch, or without the cache, never caps it;
// and the event data a projection sees is what the log holds.

import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { ANY } from '../../src/ports/event-store';
import {
  capHeapGrowth,
  heapGrowthHolders,
  heapGrowthSet,
  MIN_GROWTH_PERCENT,
} from '../../src/projection/heap-growth';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';

const test = suite('projection runner: heap growth during a backlog');

/** Records, per event, whether the cap was held while it was applied; throws at `failAt`. */
function watcher(failAt?: number): Projection & { held: boolean[]; data: unknown[] } {
  const held: boolean[] = [];
  const data: unknown[] = [];
  return {
    name: 'watcher',
    eventTypes: ['Counted'],
    held,
    data,
    async apply(event) {
      held.push(heapGrowthHolders() > 0);
      data.push(JSON.parse(JSON.stringify(event.data)));
      if (failAt !== undefined && held.length === failAt) throw new Error('boom');
    },
  };
}

async function log(n: number): Promise<MemoryEventStore> {
  const events = new MemoryEventStore();
  for (let i = 0; i < n; i++)
    await events.append(
      `k-${i % 7}`,
      [{ type: 'Counted', data: { key: `restaurant_${i % 3}`, at: '2031-03-02T09:00:00.000Z', n: i } }],
      ANY,
    );
  return events;
}

test('capped from the first full batch to the end of the catch-up', async () => {
  const events = await log(250);
  const p = watcher();
  const runner = new ProjectionRunner(events, new EmbeddedDocumentStore(), [p], { batchSize: 100 });
  assert.is(await runner.catchUp(), 250);
  assert.is(p.held.slice(0, 100).filter(Boolean).length, 0, 'not during the first batch');
  assert.ok(p.held.slice(100).every(Boolean), 'held after it');
  assert.is(heapGrowthHolders(), 0, 'released at the end');
  assert.equal(
    p.data.map((d) => (d as { n: number }).n),
    Array.from({ length: 250 }, (_, i) => i),
  );
  await events.close();
});

test('released when a projection throws', async () => {
  const events = await log(250);
  const p = watcher(180);
  const runner = new ProjectionRunner(events, new EmbeddedDocumentStore(), [p], { batchSize: 100 });
  await runner.catchUp().then(
    () => assert.unreachable('the catch-up should fail'),
    (err: Error) => assert.is(err.message, 'boom'),
  );
  assert.is(heapGrowthHolders(), 0);
  await events.close();
});

test('never for a short catch-up, without the write-back cache, or with 0', async () => {
  for (const [n, options] of [
    [50, { batchSize: 100 }],
    [250, { batchSize: 100, writeBack: false }],
    [250, { batchSize: 100, heapGrowthPercent: 0 }],
  ] as const) {
    const events = await log(n);
    const p = watcher();
    const runner = new ProjectionRunner(events, new EmbeddedDocumentStore(), [p], options);
    assert.is(await runner.catchUp(), n);
    assert.not.ok(p.held.some(Boolean), JSON.stringify(options));
    await events.close();
  }
});

test('holders nest; a release is idempotent', () => {
  const a = capHeapGrowth(20);
  const b = capHeapGrowth(50);
  assert.is(heapGrowthHolders(), 2);
  a();
  a();
  assert.is(heapGrowthHolders(), 1);
  b();
  assert.is(heapGrowthHolders(), 0);
  capHeapGrowth(0)();
  assert.is(heapGrowthHolders(), 0);
});

/** A full collection on demand (the flag set at run time, the function taken from a fresh context). */
function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}
const settle = () => new Promise((r) => setTimeout(r, 50));

test('after a full collection, the percent follows the headroom; released, V8 decides again', async () => {
  const tight = capHeapGrowth(35, 2 ** 16);
  assert.is(heapGrowthSet(), 35, 'the percent until a full collection is seen');
  fullGc();
  await settle();
  // This process holds at least a few MB live: 64 KiB of headroom is under the floor.
  assert.is(heapGrowthSet(), MIN_GROWTH_PERCENT);
  tight();
  assert.is(heapGrowthSet(), 0);
  const roomy = capHeapGrowth(35, 2 ** 40);
  fullGc();
  await settle();
  assert.is(heapGrowthSet(), 35, 'a headroom larger than 35 % of the heap leaves the percent');
  roomy();
  // A headroom of about a fifth of the live heap: a percent near 20, from the heap measured after it.
  fullGc();
  const fifth = capHeapGrowth(35, Math.round(getHeapStatistics().used_heap_size / 5));
  fullGc();
  await settle();
  const set = heapGrowthSet();
  assert.ok(set >= 14 && set <= 24, `about 20 %, not ${set}`);
  fifth();
  const percentOnly = capHeapGrowth(20);
  fullGc();
  await settle();
  assert.is(heapGrowthSet(), 20, 'no headroom: the percent alone');
  percentOnly();
  assert.is(heapGrowthSet(), 0);
});

test.run();
