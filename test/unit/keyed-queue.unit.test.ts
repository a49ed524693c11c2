// KeyedQueue (src/core/keyed-queue.ts): one task at a time per key, a failed task releasing the key
// like a successful one, and no entry kept for a key once nothing waits on it (runCommand keeps one
// queue per store, keyed by stream name: an entry per stream ever written would grow without end).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KeyedQueue } from '../../src/core/keyed-queue';

const keysHeld = (q: KeyedQueue) => (q as unknown as { tails: Map<string, unknown> }).tails.size;
/** Lets the queue's own bookkeeping (promise reactions) run. */
const drained = () => new Promise<void>((resolve) => setImmediate(resolve));

test('tasks of one key run one after the other, in order; other keys do not wait', async () => {
  const q = new KeyedQueue();
  const log: string[] = [];
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const first = q.run('a', async () => {
    log.push('a1 start');
    await gate;
    log.push('a1 end');
  });
  const second = q.run('a', async () => {
    log.push('a2');
  });
  await q.run('b', async () => {
    log.push('b');
  });
  assert.equal(log, ['a1 start', 'b'], 'b ran while a1 held a; a2 waited');
  release();
  await Promise.all([first, second]);
  assert.equal(log, ['a1 start', 'b', 'a1 end', 'a2']);
});

test('a task that throws gives its error to its caller and lets the next one run', async () => {
  const q = new KeyedQueue();
  const failed = q.run('a', async () => {
    throw new Error('refused');
  });
  const next = q.run('a', async () => 'ran');
  const err = await failed.then(
    () => null,
    (e: unknown) => e,
  );
  assert.match((err as Error).message, 'refused');
  assert.is(await next, 'ran');
});

test('no key is kept once its tasks are done, failed ones included', async () => {
  const q = new KeyedQueue();
  const runs: Promise<unknown>[] = [];
  for (let i = 0; i < 1_000; i++)
    runs.push(
      q.run(`stream-${i % 250}`, async () => {
        if (i % 3 === 0) throw new Error(`task ${i}`);
        return i;
      }),
    );
  assert.ok(keysHeld(q) > 0, 'keys are held while tasks wait');
  await Promise.allSettled(runs);
  await drained();
  assert.is(keysHeld(q), 0);
});

test.run();
