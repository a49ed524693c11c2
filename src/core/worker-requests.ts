// Requests to a worker thread answered by id: what the SQLite log's writer thread and the SQLite key
// store's key writer share. A worker that fails (an error, an exit) answers every pending request, and
// every later one, with null: the caller then does the work on its own thread.
import type { TransferListItem, Worker } from 'node:worker_threads';

export class WorkerRequests<Answer extends { id: number }> {
  private next = 0;
  private readonly pending = new Map<number, (answer: Answer | null) => void>();
  private dead = false;

  /** `other`: a message that answers no request (a worker's "ready"). */
  constructor(
    private readonly worker: Worker,
    other: (message: unknown) => void = () => undefined,
  ) {
    worker.on('message', (m: Answer | Record<string, unknown>) => {
      if (typeof m?.id !== 'number') return other(m);
      const done = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) worker.unref();
      done?.(m as Answer);
    });
    const fail = () => {
      this.dead = true;
      for (const done of this.pending.values()) done(null);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', fail);
    // Idle, the worker keeps no process alive; with a request pending it does (ask), until the
    // answer or its exit: unref'd, a worker that died left a process with nothing else to wait for
    // (a CLI command) to end before its exit was seen, the request never answered. Unref'd after
    // the listeners: listening for 'message' refs the worker's port again.
    worker.unref();
  }

  /** The worker failed, or was closed: every request answers null. */
  get failed(): boolean {
    return this.dead;
  }

  /** The id the last request was sent under (-1: none yet). */
  get lastSent(): number {
    return this.next - 1;
  }

  /** Sends `message` with a new id; its answer, or null once the worker has failed. */
  ask(message: Record<string, unknown>, transfer?: readonly TransferListItem[]): Promise<Answer | null> {
    if (this.dead) return Promise.resolve(null);
    const id = this.next;
    // Posted before anything is registered: a message the structured clone refuses (DataCloneError) is
    // the caller's to hear, and registered first it stayed pending, the worker ref'd, the process alive
    // for ever. The answer comes in a later turn of the event loop, after the registration below.
    try {
      this.worker.postMessage({ ...message, id }, transfer);
    } catch (err) {
      return Promise.reject(err);
    }
    this.next++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<Answer | null>((resolve) => {
      this.pending.set(id, resolve);
    });
  }

  async close(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }
}
