// A thread that runs the SQLite log's group commits (sqlite.ts `writerThread`). better-sqlite3 is
// synchronous: on the main thread a commit holds the event loop for its fsync (~5-10 ms on a virtual
// disk), and every request that arrives meanwhile waits. Here the main thread prepares and checks
// the appends (validate.ts), the thread writes them in one transaction on its own connection, and
// the promises settle when it answers, after COMMIT: a resolved append is as durable as before, and
// no reader sees a commit before its fsync (SQLite publishes a WAL commit to readers after syncing
// it). One group is in the thread at a time; appends arriving meanwhile form the next group.

import { Worker } from 'node:worker_threads';
import { transferable } from '../../core/thread-text';
import { WorkerRequests } from '../../core/worker-requests';
import { encodeGroup, type Outcome, receiveError, type SentError, type WriteAppend } from './sqlite-writes';

// A worker thread does not inherit tsx's loader hooks: it registers them, then loads its module.
const BOOT = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(new URL('./sqlite-writer-thread.ts', import.meta.url).href)}); });`;

type Answer = { outcomes: (Outcome | { ok: false; error: SentError })[] } | { failed: string; code?: string };

/** The write lock stayed with another process past the busy timeout: the group wrote nothing. */
export class WriterBusyError extends Error {
  readonly code = 'SQLITE_BUSY';
}

export class WriterThread {
  private readonly requests: WorkerRequests<{ id: number } & Answer>;
  private ready = false;

  private constructor(
    worker: Worker,
    private readonly published: BigInt64Array,
  ) {
    this.requests = new WorkerRequests(worker, (m) => {
      if ((m as { ready?: boolean })?.ready === true) this.ready = true;
    });
  }

  /** Writer threads this process started (tests: a CLI command that only reads starts none). */
  static started = 0;

  static start(file: string, synchronous: string, timeout: number): WriterThread | null {
    try {
      const committed = new SharedArrayBuffer(3 * 8);
      const thread = new WriterThread(
        new Worker(BOOT, { eval: true, workerData: { file, synchronous, timeout, committed } }),
        new BigInt64Array(committed),
      );
      WriterThread.started++;
      return thread;
    } catch {
      return null;
    }
  }

  /** Alive: a group can be sent (before the thread is ready, it waits in the channel). */
  get usable(): boolean {
    return !this.requests.failed;
  }

  /** Started and answering. */
  get isReady(): boolean {
    return this.ready && !this.requests.failed;
  }

  /** Groups the thread committed. */
  written = 0;

  /**
   * The group's outcomes (errors of the store rebuilt), or null when the thread could not write it
   * (it failed, or an unexpected SQLite error rolled the group back): the caller writes the appends
   * itself. After a thread died mid-commit some may be stored already; a repeat of those is
   * answered as their retry (same event ids), so nothing is written twice. Throws WriterBusyError
   * when another process held the write lock past the busy timeout (as the main thread's write
   * would fail).
   */
  /** The id of the group the thread was last sent (-1: none yet). */
  get lastSent(): number {
    return this.requests.lastSent;
  }

  /**
   * The positions group `id` wrote, once the thread has committed it, even before its answer arrives
   * (the thread publishes them in shared memory as soon as COMMIT returns); null before that, or when it
   * wrote none.
   */
  committedRange(id: number): [number, number] | null {
    const tag = BigInt(id + 1);
    if (Atomics.load(this.published, 0) !== tag) return null;
    const first = Atomics.load(this.published, 1);
    const last = Atomics.load(this.published, 2);
    if (Atomics.load(this.published, 0) !== tag) return null;
    return [Number(first), Number(last)];
  }

  async write(queue: { batch: WriteAppend; created: string }[]): Promise<Outcome[] | null> {
    const group = encodeGroup(queue);
    const answer = await this.requests.ask({ group }, [
      group.lens.buffer as ArrayBuffer,
      ...transferable(group.text),
    ]);
    if (answer !== null && 'failed' in answer && answer.code === 'SQLITE_BUSY')
      throw new WriterBusyError(answer.failed);
    if (answer === null || 'failed' in answer) return null;
    this.written++;
    return answer.outcomes.map((o) => (o.ok ? o : { ok: false, error: receiveError(o.error as SentError) }));
  }

  close(): Promise<void> {
    return this.requests.close();
  }
}
