// A runtime whose event store lets a test act at exactly the wrong moment of a command: just before a
// chosen append (a concurrent write landing, a stall), or from a chosen append on (a process dying).
// Everything else is the real store.
import {
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  WrongExpectedRevisionError,
} from '../../src/ports/event-store';
import type { Runtime } from '../../src/runtime';

type Append = (
  stream: string,
  batch: NewEvent[],
  expected: ExpectedRevision,
) => ReturnType<EventStore['append']>;

/** The runtime with its store's appends going through `append`, which may call the real one. */
function wrapAppend(rt: Runtime, append: (real: Append) => Append): Runtime {
  const real: Append = (s, b, e) => rt.events.append(s, b, e);
  const events: EventStore = {
    kind: rt.events.kind,
    append: append(real),
    readStream: (s, o) => rt.events.readStream(s, o),
    readAll: (o) => rt.events.readAll(o),
    subscribe: (o) => rt.events.subscribe(o),
    headPosition: () => rt.events.headPosition(),
    close: () => rt.events.close(),
  };
  return { ...rt, events };
}

/** Runs `before` ahead of the first append `match` picks, then appends as usual. */
export const withHook = (
  rt: Runtime,
  match: (stream: string, batch: NewEvent[]) => boolean,
  before: (stream: string) => Promise<void>,
): Runtime => {
  let fired = false;
  return wrapAppend(rt, (real) => async (stream, batch, expected) => {
    if (!fired && match(stream, batch)) {
      fired = true;
      await before(stream);
    }
    return real(stream, batch, expected);
  });
};

/** Appends as usual, then runs `after` once the first append `match` picks has landed. */
export const withHookAfter = (
  rt: Runtime,
  match: (stream: string, batch: NewEvent[]) => boolean,
  after: (stream: string) => Promise<void>,
): Runtime => {
  let fired = false;
  return wrapAppend(rt, (real) => async (stream, batch, expected) => {
    const result = await real(stream, batch, expected);
    if (!fired && match(stream, batch)) {
      fired = true;
      await after(stream);
    }
    return result;
  });
};

/** A process that dies at its first append `match` picks: none from then on lands. */
export const deadFrom = (rt: Runtime, match: (stream: string, batch: NewEvent[]) => boolean): Runtime => {
  let dead = false;
  return wrapAppend(rt, (real) => async (stream, batch, expected) => {
    if (match(stream, batch)) dead = true;
    if (dead) throw new Error('the process died here');
    return real(stream, batch, expected);
  });
};

/**
 * Every append `match` picks fails as the log would on a disk error (nothing lands); every other
 * append lands as usual: a write that fails alone, the process living on.
 */
export const failingOn = (rt: Runtime, match: (stream: string, batch: NewEvent[]) => boolean): Runtime =>
  wrapAppend(rt, (real) => async (stream, batch, expected) => {
    if (match(stream, batch)) throw new Error('SQLITE_IOERR: disk I/O error');
    return real(stream, batch, expected);
  });

/**
 * Runs `before` ahead of the `nth` read (1 = the first) of a stream `match` picks, then reads as usual:
 * a write of another process landing between two reads of a command that appends nothing between them.
 */
export const withReadHook = (
  rt: Runtime,
  match: (stream: string) => boolean,
  nth: number,
  before: () => Promise<void>,
): Runtime => {
  let seen = 0;
  const events: EventStore = {
    kind: rt.events.kind,
    append: (s, b, e) => rt.events.append(s, b, e),
    readStream: async (s, o) => {
      if (match(s) && ++seen === nth) await before();
      return rt.events.readStream(s, o);
    },
    readAll: (o) => rt.events.readAll(o),
    subscribe: (o) => rt.events.subscribe(o),
    headPosition: () => rt.events.headPosition(),
    close: () => rt.events.close(),
  };
  return { ...rt, events };
};

/** Every append `match` picks loses its race, as if another writer always landed first. */
export const alwaysRaced = (rt: Runtime, match: (stream: string, batch: NewEvent[]) => boolean): Runtime =>
  wrapAppend(rt, (real) => async (stream, batch, expected) => {
    if (match(stream, batch)) throw new WrongExpectedRevisionError(stream, expected, 0);
    return real(stream, batch, expected);
  });

/**
 * The running service's log fails (a disk error, SQLITE_IOERR) at the append of import row `row` (its
 * metadata.import_row) and takes every other append: an import stops there. Patched in place, as the
 * service holds this store; the returned function puts the real append back (call it in a finally).
 */
export function failAppendAt(events: EventStore, row: number): () => void {
  const store = events as { append: EventStore['append'] };
  const own = Object.hasOwn(store, 'append');
  const append = store.append;
  store.append = function (this: unknown, stream, batch, ...rest) {
    if (batch[0]?.metadata?.import_row === row)
      return Promise.reject(new Error('SQLITE_IOERR: disk I/O error'));
    return append.call(this, stream, batch, ...rest);
  };
  return () => {
    if (own) store.append = append;
    else delete (store as { append?: unknown }).append;
  };
}

/**
 * `events` with its stream reads counted: each readStream call adds its stream to `read`, in order, then
 * reads from the real store. A Proxy: the store is untouched and every other member is its own (methods
 * bound to it), so the counted store can be handed to a command or put in place of a service's.
 */
export function countingReads(events: EventStore): { events: EventStore; read: string[] } {
  const read: string[] = [];
  const counted = new Proxy(events, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (key !== 'readStream') return typeof v === 'function' ? v.bind(target) : v;
      return (stream: string, ...rest: unknown[]) => {
        read.push(stream);
        return (v as (s: string, ...r: unknown[]) => unknown).call(target, stream, ...rest);
      };
    },
  });
  return { events: counted, read };
}
