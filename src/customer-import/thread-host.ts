// The main thread's side of a large CSV import run in a thread of its own (import-thread.ts says
// why). It hands the thread the file's rows, answers its matching questions from the read models,
// and brings the read models up to date when a slice of the thread's is retired, with the
// plaintexts the thread sealed. Only an embedded deployment on files, on the system clock, imports
// this way; anything else runs the job on this thread (engine.ts runJob), as before.
import { Worker } from 'node:worker_threads';
import { failImportJob, loadImportJob } from '../../commands/customer-import/handler';
import type { ImportJobState } from '../../commands/customer-import/state';
import { SettledRing } from '../adapters/event-store/settled-ring';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import { SqliteKeyStore } from '../adapters/key-store/sqlite';
import { systemClock } from '../core/clock';
import { transferable } from '../core/thread-text';
import { SealingEventStore, storedEvents } from '../privacy/sealing-event-store';
import { encodeCells } from './analysis';
import { type ImportDeps, type ImportOptions, lookUpMatches, type PreparedImport, runJob } from './engine';
import { failureReason } from './failure';
import { HeldForThread } from './match-key-hold';
import { writtenAfterRecorded } from './reconcile';
import { rebuiltError, type ThreadStart, type ToHost, type ToThread, threadError } from './thread-protocol';

/**
 * The niceness of the import's thread (and of the threads it starts: the rows' analysis, the key
 * writes), Linux only: when the two cores are busy the API's thread goes first, and the import takes
 * what is left. Set first thing, before the thread loads its modules (a few hundred ms of CPU at the
 * import's start, which held the API's requests back: 18–23 GETs over 10 ms in the first second at
 * 200 a second, against 42 with the niceness set once loaded). A thread's id is in /proc/thread-self;
 * elsewhere, or if refused, the import runs as is.
 */
export const IMPORT_NICENESS = 10;

// A worker thread does not inherit tsx's loader hooks: it registers them, then loads its module.
const BOOT = `try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').at(-1));
  if (Number.isInteger(tid) && tid > 0) require('node:os').setPriority(tid, ${IMPORT_NICENESS});
} catch {}
import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})
  .then(({ register }) => { register(); return import(${JSON.stringify(new URL('./import-thread.ts', import.meta.url).href)}); });`;

/** Rows sent to the thread in one message (~1 ms of encoding each, with a turn between: 5,000 held the API 10–30 ms). */
const ROWS_CHUNK = 500;

/** Retired slices the read models may be behind by before a retirement waits for them. */
const BEHIND_SLICES = 2;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The stores a thread can open too, when this deployment has them; null otherwise. */
function threadFiles(
  deps: ImportDeps,
): { log: SqliteEventStore; events: SealingEventStore; keysFile: string } | null {
  if (!(deps.events instanceof SealingEventStore) || deps.clock !== systemClock) return null;
  const log = storedEvents(deps.events);
  const keys = deps.events.keys;
  if (!(log instanceof SqliteEventStore) || log.file === ':memory:') return null;
  if (!(keys instanceof SqliteKeyStore) || keys.file === ':memory:') return null;
  return { log, events: deps.events, keysFile: keys.file };
}

let started = 0;

/** How many imports were started in a thread of their own (tests, benchmarks). */
export const importThreadsStarted = () => started;

/** Whether this import can run in a thread of its own here. */
export function canImportInThread(deps: ImportDeps): boolean {
  return threadFiles(deps) !== null;
}

/**
 * Runs the job (started or resumed already) in a thread; its final state, or its error. A thread
 * that cannot start (it fails before its first word, or says it is unable: its log or key file would
 * not open; either way before it wrote anything) leaves the job to this thread, as before threads.
 */
export async function runJobInThread(
  deps: ImportDeps,
  prepared: PreparedImport,
  jobId: string,
  options: ImportOptions,
  resumed: boolean,
): Promise<ImportJobState> {
  const files = threadFiles(deps);
  if (files === null) throw new Error('runJobInThread: not an embedded deployment on files');
  const { log, events } = files;
  // This thread's own appends (requests') go to the log's writer thread while the import holds the
  // write lock in turns: waiting for it there, not on the event loop.
  log.startWriterThread();
  const ring = new SettledRing();
  const start: ThreadStart = {
    eventsFile: log.file,
    keysFile: files.keysFile,
    ring: ring.buffer,
    jobId,
    resumed,
    restaurant: prepared.restaurant,
    columns: prepared.columns,
    header: prepared.table.header,
    delimiter: prepared.table.delimiter,
    fileSha256: prepared.fileSha256,
    onMatch: options.onMatch,
    fileName: options.fileName,
    meta: { ...options.meta },
    batchSize: options.batchSize,
  };
  let worker: Worker | null = null;
  // The match keys the thread holds here (match-key-hold.ts), all let go when the job ends.
  const keys = new HeldForThread(prepared.restaurant._id);
  let ended = false;
  let heard = false;
  try {
    log.watchSettledRing(ring);
    const w = new Worker(BOOT, { eval: true, workerData: start });
    worker = w;
    started++;
    const outcome = await new Promise<ImportJobState | 'not started'>((resolve, reject) => {
      const post = (m: ToThread) => {
        if (!ended) w.postMessage(m);
      };
      const answering = (id: number, work: () => Promise<ToThread>) =>
        work().then(post, (err) => post({ answer: id, error: threadError(err) }));
      // The read models taking in the slices the thread retired, in order. A retirement is answered
      // at once and its catch-up runs here meanwhile; the thread is told when each is in (inModels).
      // Until then it holds that slice's keys and customers (engine.ts), so the matches it asks for
      // meanwhile are answered at once, from read models that slice cannot change for those rows.
      // The job's end waits for every catch-up.
      let caughtUp: Promise<void> = Promise.resolve();
      let behind = 0;
      let catchUpError: unknown = null;
      w.on('message', (m: ToHost) => {
        heard = true;
        if ('ask' in m && 'match' in m) {
          answering(m.ask, async () => {
            // Held first, in this thread's queue with the API's: a request in flight on one of them
            // has its customer in the read models before the rows are matched.
            await keys.take(m.take);
            return { answer: m.ask, value: await lookUpMatches(deps.docs, prepared.restaurant, m.match) };
          });
        } else if ('release' in m) keys.release(m.release);
        else if ('ask' in m && 'settle' in m) {
          const { plains } = m;
          const position = BigInt(m.settle);
          const before = caughtUp;
          behind++;
          caughtUp = before.then(async () => {
            // Begun here, the hand-over and the catch-up's first slice ran in the poll phase, in this
            // message's callback. The first yield does not separate the hand-over from that turn by
            // any I/O: setImmediate from the poll phase runs in this iteration's check phase, right
            // after the poll's other callbacks. The second one does: the catch-up starts in the next
            // iteration's check phase at the earliest (an immediate queued by an immediate waits for
            // the next iteration), after a poll: the hand-over and its first slice are not one hold of
            // the API's event loop.
            await yieldToLoop();
            await events.rememberPlains(plains);
            await yieldToLoop();
            await deps.settle(position);
          });
          const step = caughtUp.finally(() => {
            behind--;
          });
          // A failed catch-up reaches the thread with this slice's inModels, with the next retirement's
          // answer and with the end: its job fails as it would have in-process.
          step.then(
            () => post({ inModels: m.ask }),
            (err) => {
              catchUpError ??= err;
              post({ inModels: m.ask, error: threadError(err) });
            },
          );
          // At most BEHIND_SLICES retired slices wait behind the one being taken in: the thread
          // waits for the read models then (a retirement's catch-up is one slice's, ~500 rows).
          const ack = () =>
            post(
              catchUpError === null
                ? { answer: m.ask, value: null }
                : { answer: m.ask, error: threadError(catchUpError) },
            );
          if (behind > BEHIND_SLICES) before.then(ack, ack);
          else ack();
        } else if ('progress' in m) options.onProgress?.(m.progress);
        else if ('done' in m) {
          ended = true;
          caughtUp.then(() => resolve(m.done), reject);
        } else if ('failed' in m) {
          ended = true;
          reject(rebuiltError(m.failed));
        } else if ('unable' in m) {
          ended = true;
          resolve('not started');
        }
      });
      const stopped = (err: Error) => {
        if (ended) return;
        ended = true;
        if (!heard) resolve('not started');
        else reject(err);
      };
      w.on('error', stopped);
      w.on('exit', (code) =>
        stopped(new Error(`the import's thread stopped (exit code ${code}) before the job ended`)),
      );
      // The server is stopping: the thread writes no further slice and fails its job as interrupted.
      const stop = () => post({ stop: true });
      if (options.stopSignal?.aborted) stop();
      else options.stopSignal?.addEventListener('abort', stop, { once: true });
      void sendRows(w, prepared.table.rows, () => ended);
    }).catch(async (err) => {
      // The thread marks its job failed itself; a thread that died without a word cannot. Ended
      // first, so that nothing of it writes after the look at its job and the log.
      await worker?.terminate().catch(() => undefined);
      // Its keys are let go as soon as the read models have all it wrote (a request waiting for one
      // then matches its customers), not after the bookkeeping below (a log scan of up to 100k rows).
      try {
        await deps.settle(await deps.events.headPosition());
      } catch {
        // The read models failed: the next catch-up takes its writes in.
      }
      keys.end();
      const job = await loadImportJob(deps, jobId).catch(() => null);
      if (job?.state.status === 'running') {
        // What its writes did, from the log (reconcile.ts).
        const { processed, rowCount } = job.state;
        const written = await writtenAfterRecorded(deps, jobId, processed, rowCount).catch(() => undefined);
        await failImportJob(
          deps,
          jobId,
          job,
          failureReason(err, processed),
          { ...options.meta, restaurant_id: prepared.restaurant._id },
          written,
        ).catch(() => undefined);
      }
      throw err;
    });
    if (outcome !== 'not started') return outcome;
  } finally {
    ended = true;
    keys.end();
    log.unwatchSettledRing(ring);
    await worker?.terminate().catch(() => undefined);
  }
  return runJob(deps, prepared, jobId, await loadImportJob(deps, jobId), options, resumed);
}

/** The file's rows, a chunk a turn (the thread waits for the last before it starts). */
async function sendRows(
  worker: Worker,
  rows: readonly (readonly string[])[],
  stop: () => boolean,
): Promise<void> {
  for (let i = 0; i === 0 || i < rows.length; i += ROWS_CHUNK) {
    if (stop()) return;
    const cells = encodeCells(rows.slice(i, i + ROWS_CHUNK));
    worker.postMessage({ rows: cells, last: i + ROWS_CHUNK >= rows.length } satisfies ToThread, [
      cells.lens.buffer as ArrayBuffer,
      ...transferable(cells.text),
    ]);
    await yieldToLoop();
  }
}
