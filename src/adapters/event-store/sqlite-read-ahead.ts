// readAll of a large backlog on two cores (sqlite.ts `readAhead`). A worker thread
// (sqlite-read-ahead-thread.mjs) reads the log's pages on its own read-only connection, up to
// READ_AHEAD_PAGES pages ahead; the thread that consumes the events (an embedded start's catch-up
// into every projection) only takes each page's rows and builds the events. Same events,
// same order, same ends (a short page, the limit) as the paged read on the calling thread.
//
// Should the worker fail (it cannot start, it dies, its read throws), the events go on from the last
// page taken, read on the calling thread: a caller never sees the difference (an error that stays,
// a corrupt file, then surfaces from that read, as it would have without the worker).
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { RecordedEvent } from '../../ports/event-store';
import { type StoredRow, storedRowToEvent as toEvent } from './sqlite-log-reader';

/** The worker: plain JavaScript, started without tsx (see its header). */
const THREAD = new URL('./sqlite-read-ahead-thread.mjs', import.meta.url);

/** What the worker is started with (its workerData, besides the port pages go to). */
interface ReadAheadStart {
  file: string;
  /** Exclusive: the first page starts after this position. */
  after: number;
  /** Events still wanted (Infinity: to the end of the log). */
  remaining: number;
  batchSize: number;
  /** Test hook: the thread exits after sending this many pages, as a crash would. */
  dieAfterPages?: number;
  /** Pages it may send before the first is taken. */
  ahead: number;
  /** Int32 [pages taken, stop]: the worker reads its credit here (no message per page). */
  shared: SharedArrayBuffer;
}

/** A page: its rows, the last position read; `end` when it was the last. */
interface ReadAheadPage {
  rows: StoredRow[];
  last: number;
  end: boolean;
}

/** Pages the worker may read before the consumer takes the first of them. */
export const READ_AHEAD_PAGES = 4;

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

export interface ReadAheadOptions {
  file: string;
  after: number;
  remaining: number;
  batchSize: number;
  /** The paged read on the calling thread, from a position on, for the events the worker did not deliver. */
  fallback: (after: number, remaining: number) => AsyncIterator<RecordedEvent>;
  /** Test hook (see ReadAheadStart). */
  dieAfterPages?: number;
}

type Message = ReadAheadPage | { failed: string };

export class ReadAheadEvents implements AsyncIterableIterator<RecordedEvent> {
  private worker: Worker | null = null;
  private readonly shared = new Int32Array(new SharedArrayBuffer(8));
  private port: MessagePort | null = null;
  private readonly pages: ReadAheadPage[] = [];
  private rows: StoredRow[] = [];
  private index = 0;
  /** The last position of the pages taken (the fallback's start). */
  private cursor: number;
  private remaining: number;
  private ended = false;
  private failed = false;
  private fallback: AsyncIterator<RecordedEvent> | null = null;
  private wake: (() => void) | null = null;
  private started = false;
  /** Pages the worker delivered (tests, benchmarks). */
  workerPages = 0;

  constructor(private readonly options: ReadAheadOptions) {
    this.cursor = options.after;
    this.remaining = options.remaining;
  }

  /** Starts the worker at the first next(): a readAll never iterated costs no thread. */
  private start(): void {
    this.started = true;
    const options = this.options;
    try {
      const data: ReadAheadStart = {
        file: options.file,
        after: options.after,
        remaining: options.remaining,
        batchSize: options.batchSize,
        dieAfterPages: options.dieAfterPages,
        ahead: READ_AHEAD_PAGES,
        shared: this.shared.buffer as SharedArrayBuffer,
      };
      // Pages come on a channel of their own, taken synchronously (receiveMessageOnPort) when the
      // consumer needs the next one.
      const { port1, port2 } = new MessageChannel();
      const worker = new Worker(THREAD, {
        // Not the parent's execArgv (`--import tsx` under tsx): the thread is plain JavaScript, and
        // registering tsx there cost ~0.4 s of CPU and ~10 MB at every large readAll, for nothing.
        execArgv: [],
        resourceLimits: { maxYoungGenerationSizeMb: 8 },
        workerData: { ...data, port: port2 },
        transferList: [port2],
      });
      worker.unref();
      // No listener but while the consumer waits: pages stay serialized in the channel (outside the
      // heap) until taken. Deserialized early, a page outlived a scavenge or two and was promoted:
      // old-space garbage, +150 MB of peak RSS over 1,000,000 events. The listener also refs the
      // channel only then: an iteration abandoned half-way does not keep the process alive.
      const fail = () => {
        if (this.worker !== worker) return;
        this.worker = null;
        // Pages sent before it stopped may still wait in the channel: they are good, take them.
        for (let m = receiveMessageOnPort(port1); m; m = receiveMessageOnPort(port1))
          this.receive(m.message as Message);
        if (!this.ended) this.failed = true;
        this.notify();
      };
      worker.on('error', fail);
      worker.on('exit', fail);
      this.worker = worker;
      this.port = port1;
    } catch {
      this.failed = true;
    }
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** Whether the worker read every page (false once it failed and the calling thread took over). */
  get usedWorkerOnly(): boolean {
    return this.fallback === null && !this.failed;
  }

  private readonly onMessage = (m: Message) => this.receive(m);

  private receive(m: Message): void {
    if ('failed' in m) {
      this.failed = true;
      this.stopWorker();
    } else {
      this.pages.push(m);
      if (m.end) this.ended = true;
    }
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  next(): Promise<IteratorResult<RecordedEvent>> {
    if (this.index < this.rows.length)
      return Promise.resolve({ done: false, value: toEvent(this.rows[this.index++]!) });
    return this.nextSlow();
  }

  private async nextSlow(): Promise<IteratorResult<RecordedEvent>> {
    if (!this.started) this.start();
    for (;;) {
      if (this.fallback !== null) return this.fallback.next();
      if (this.index < this.rows.length) return { done: false, value: toEvent(this.rows[this.index++]!) };
      const page = this.takePage();
      if (page !== null) {
        this.rows = page.rows;
        this.index = 0;
        this.cursor = page.last;
        this.remaining -= page.rows.length;
        this.workerPages++;
        if (!page.end && this.worker !== null) {
          Atomics.add(this.shared, 0, 1);
          Atomics.notify(this.shared, 0);
        }
        continue;
      }
      if (this.ended) {
        this.finish();
        return DONE;
      }
      if (this.failed) {
        this.stopWorker();
        this.closePort();
        this.fallback = this.options.fallback(this.cursor, this.remaining);
        continue;
      }
      const port = this.port;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        port?.once('message', this.onMessage);
      });
      port?.off('message', this.onMessage);
    }
  }

  /** The next page: one delivered already, or one waiting in the channel (taken without an event-loop turn). */
  private takePage(): ReadAheadPage | null {
    if (this.pages.length === 0 && this.port !== null) {
      const m = receiveMessageOnPort(this.port);
      if (m) this.receive(m.message as Message);
    }
    return this.pages.shift() ?? null;
  }

  async return(): Promise<IteratorResult<RecordedEvent>> {
    this.finish();
    await this.fallback?.return?.();
    return DONE;
  }

  private finish(): void {
    this.ended = true;
    this.rows = [];
    this.index = 0;
    this.pages.length = 0;
    this.stopWorker();
    this.closePort();
  }

  private stopWorker(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker === null) return;
    Atomics.store(this.shared, 1, 1);
    Atomics.notify(this.shared, 0);
    void worker.terminate();
  }

  /** After the last page: nothing more comes on the channel. */
  private closePort(): void {
    this.port?.close();
    this.port = null;
  }
}
