// WorkerRequests (src/core/worker-requests.ts): the answers of a worker thread by id, null once it fails.
import { EventEmitter } from 'node:events';
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

/** A stand-in for a Worker: counts whether it is ref'd; postMessage runs `post`. */
class FakeWorker extends EventEmitter {
  refs = 0;
  constructor(readonly post: (message: { id: number }) => void) {
    super();
  }
  ref() {
    this.refs = 1;
  }
  unref() {
    this.refs = 0;
  }
  postMessage(message: { id: number }) {
    this.post(message);
  }
  terminate() {
    return Promise.resolve(0);
  }
}

// A message the structured clone refuses (a function: DataCloneError) is a caller's bug, told to it;
// left registered as pending, it held the worker ref'd for ever, and the process never ended.
test('a message that cannot be posted rejects and leaves nothing pending (the worker idle)', async () => {
  const sent: number[] = [];
  const fake = new FakeWorker((m) => {
    if ('f' in m) throw new DOMException('function could not be cloned', 'DataCloneError');
    sent.push(m.id);
  });
  const requests = new WorkerRequests<{ id: number }>(fake as unknown as Worker);
  await requests.ask({ f: () => 1 }).then(
    () => assert.unreachable('answered'),
    (err: Error) => assert.is(err.name, 'DataCloneError'),
  );
  assert.is(fake.refs, 0, 'the worker keeps no process alive');
  assert.is(requests.lastSent, -1, 'nothing was sent');
  // Later requests are answered as before.
  const answer = requests.ask({ x: 1 });
  assert.is(fake.refs, 1);
  fake.emit('message', { id: sent[0] });
  assert.equal(await answer, { id: 0 });
  assert.is(fake.refs, 0);
});

const refdPorts = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;

// The reviewer's case end to end, with a real Worker: it refuses such a message as it is posted
// (synchronously, which ask relies on), and the worker, idle, holds the process no more than before.
// Idle it never was unref'd at all: listening for 'message' refs a worker's port again, and the
// constructor unref'd it before it listened.
test('with a real worker: idle, or after a refused message, it keeps no process alive', async () => {
  const before = refdPorts();
  const worker = echoWorker();
  const requests = new WorkerRequests<{ id: number; echo: string }>(worker);
  // The worker no longer holds the process while the test waits for it to start: this timer does.
  const hold = setInterval(() => undefined, 60_000);
  try {
    await new Promise((resolve) => worker.once('online', resolve));
    assert.is(refdPorts(), before, 'idle');
    await requests.ask({ f: () => 1 }).then(
      () => assert.unreachable('answered'),
      (err: Error) => assert.is(err.name, 'DataCloneError'),
    );
    assert.is(refdPorts(), before, 'after the refused message');
    assert.is((await requests.ask({ echo: 'next' }))?.echo, 'next');
    assert.is(refdPorts(), before, 'answered');
  } finally {
    clearInterval(hold);
    await requests.close();
  }
});

test.run();
