// WorkerRequests (src/core/worker-requests.ts): the answers of a worker thread by id, null once it fails.
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WorkerRequests } from '../../src/core/worker-requests';

/** A worker that answers `{ id, echo }`, or exits unanswered when asked to. */
function echoWorker(): Worker {
  return new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.on('message', (m) => {
       if (m.die) process.exit(3);
       parentPort.postMessage({ id: m.id, echo: m.echo });
     });`,
    { eval: true },
  );
}

test('answers by id; once the worker is closed, every request answers null', async () => {
  const requests = new WorkerRequests<{ id: number; echo: string }>(echoWorker());
  const [a, b] = await Promise.all([requests.ask({ echo: 'a' }), requests.ask({ echo: 'b' })]);
  assert.is(a?.echo, 'a');
  assert.is(b?.echo, 'b');
  await requests.close();
  assert.ok(requests.failed);
  assert.is(await requests.ask({ echo: 'c' }), null);
});

// The worker is unref'd (an idle one must not keep a process alive). A request waiting for it must:
// when the worker died, nothing else may hold the event loop (a CLI command), and the process ended
// before the worker's exit was seen, the request unanswered.
test('a worker that dies with a request pending answers it null (the process waits for that)', async () => {
  const requests = new WorkerRequests<{ id: number; echo: string }>(echoWorker());
  assert.is(await requests.ask({ die: true }), null);
  assert.ok(requests.failed);
  assert.is(await requests.ask({ echo: 'after' }), null);
});

test.run();
