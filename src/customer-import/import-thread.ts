// A large CSV import's command side, in a thread of its own (thread-host.ts starts it): the rows'
// checks, decisions, sealing and appends run here, on this thread's own connection to the log and
// to the key file, so the API's event loop keeps only what must be on it: matching against the
// read models (asked for here, answered there) and bringing the read models up to date with the
// import's events (asked for at each slice's retirement, with the plaintexts sealed here so the
// main thread opens the events without a key look-up or a decryption). It is the engine's own
// runJob, with those two steps asked of the main thread: one set of rules, wherever it runs.
//
// The appends here are settled by their caller (this job): their positions go to the main thread's
// log through shared memory (settled-ring.ts), so a request there never waits for the read models
// to take in the import's last slice.
import { parentPort, workerData } from 'node:worker_threads';
import type { OnMatch } from '../../commands/customer-import/events';
import { loadImportJob } from '../../commands/customer-import/handler';
import type { ImportJobState } from '../../commands/customer-import/state';
import { SettledRing } from '../adapters/event-store/settled-ring';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import { SqliteKeyStore } from '../adapters/key-store/sqlite';
import { systemClock } from '../core/clock';
import type { CommandMeta } from '../core/command-meta';
import { SealingEventStore } from '../privacy/sealing-event-store';
import { decodeCells, type EncodedCells } from './analysis';
import { type ImportDeps, type MatchLookup, type PreparedImport, type RowMatch, runJob } from './engine';
import { rebuiltError, type ThreadStart, type ToHost, type ToThread, threadError } from './thread-protocol';

const start = workerData as ThreadStart;

// This thread runs at thread-host.ts's IMPORT_NICENESS, set before it loaded its modules.
const port = parentPort;
if (port === null) throw new Error('import-thread.ts runs in a worker thread');

let nextAsk = 0;
const asked = new Map<number, { resolve: (answer: unknown) => void; reject: (err: Error) => void }>();
const rows: string[][] = [];
let rowsIn: (() => void) | null = null;

const send = (m: ToHost) => port.postMessage(m);

// Per retirement asked (its ask's id): resolved when the main thread's read models have it.
const inModels = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
let lastSettled: Promise<void> = Promise.resolve();

function ask<T>(
  m: { match: MatchLookup[]; take: string[] } | { settle: string; plains: unknown[] },
): Promise<T> {
  const id = nextAsk++;
  if ('settle' in m) {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // Observed by inReadModels' callers; a failure unobserved here is not an unhandled rejection.
    promise.catch(() => undefined);
    inModels.set(id, { resolve, reject });
    lastSettled = promise;
  }
  return new Promise<T>((resolve, reject) => {
    asked.set(id, { resolve: resolve as (answer: unknown) => void, reject });
    send({ ask: id, ...m } as ToHost);
  });
}

/** Aborted when the main thread says the server is stopping (engine.ts ImportOptions.stopSignal). */
const stopping = new AbortController();

port.on('message', (m: ToThread) => {
  if ('stop' in m) {
    stopping.abort();
    return;
  }
  if ('inModels' in m) {
    const waiting = inModels.get(m.inModels);
    inModels.delete(m.inModels);
    if ('error' in m) waiting?.reject(rebuiltError(m.error));
    else waiting?.resolve();
    return;
  }
  if ('answer' in m) {
    const done = asked.get(m.answer);
    asked.delete(m.answer);
    if ('error' in m) done?.reject(rebuiltError(m.error));
    else done?.resolve(m.value);
    return;
  }
  if ('rows' in m) {
    for (const r of decodeCells(m.rows as EncodedCells)) rows.push(r);
    if (m.last) rowsIn?.();
  }
});

/** Whether the job's run began here (before it, this thread has written nothing). */
let running = false;

async function main(): Promise<ImportJobState> {
  const allRows = new Promise<void>((resolve) => {
    rowsIn = resolve;
  });
  const stored = SqliteEventStore.open(start.eventsFile, {
    writerThread: 'off',
    readAhead: false,
    settledRing: new SettledRing(start.ring),
  });
  let keys: SqliteKeyStore;
  try {
    keys = SqliteKeyStore.open(start.keysFile);
  } catch (err) {
    await stored.close().catch(() => undefined);
    throw err;
  }
  const events = new SealingEventStore(stored, keys, () => systemClock.now());
  events.collectSealedPlains();
  try {
    const deps: ImportDeps = {
      events,
      clock: systemClock,
      // Never read here: matching is asked of the main thread (matchRows).
      docs: undefined as never,
      // The match keys are held on the main thread, in the queue of its requests (match-key-hold.ts).
      matchRows: (inputs, take) => ask<(RowMatch | null)[]>({ match: [...inputs], take: [...take] }),
      releaseMatchKeys: (keys) => send({ release: keys }),
      async settle(position) {
        if (position === null || position === undefined) return;
        await ask<null>({ settle: position.toString(), plains: events.takeSealedPlains() });
      },
      // A retirement is answered before the main thread's read models have it (thread-host.ts).
      inReadModels: () => lastSettled,
    };
    await allRows;
    const prepared: PreparedImport = {
      restaurant: start.restaurant,
      columns: start.columns,
      fileSha256: start.fileSha256,
      table: { delimiter: start.delimiter, header: start.header, rows },
    };
    const job = await loadImportJob(deps, start.jobId);
    running = true;
    return await runJob(
      deps,
      prepared,
      start.jobId,
      job,
      {
        onMatch: start.onMatch as OnMatch,
        fileName: start.fileName,
        meta: start.meta as CommandMeta,
        batchSize: start.batchSize,
        worker: true,
        onProgress: (progress) => send({ progress }),
        stopSignal: stopping.signal,
      },
      start.resumed,
    );
  } finally {
    await events.close().catch(() => undefined);
    await keys.close().catch(() => undefined);
  }
}

main().then(
  (state) => send({ done: state }),
  // Before the run began (the log or the key file would not open here, say), nothing was written: the
  // main thread runs the job itself.
  (err) => send(running ? { failed: threadError(err) } : { unable: threadError(err) }),
);
