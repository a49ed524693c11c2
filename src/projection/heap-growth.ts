// A long catch-up on the embedded store (an embedded start replays the whole log) keeps every read
// model in the heap and replaces its documents version after version: the old-space garbage V8
// lets pile up between two full collections grows with the live heap (V8 picks a growing factor of
// up to 4 after each one), and that garbage is most of the peak RSS above the read models themselves.
// While such a catch-up runs, the heap may grow by `percent` per full collection (V8's
// --heap-growing-percent): more full collections, marked concurrently on the other core, for a peak
// much nearer the live heap. V8's own heuristic comes back when the last catch-up holding it ends.
// A process started with its own --heap-growing-percent is left alone.
import { setFlagsFromString } from 'node:v8';

let holders = 0;

/** A V8 flag set at run time; a Node whose flags are frozen after start refuses it: no cap then. */
function setGrowth(percent: number): void {
  try {
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  } catch {
    // The replay runs as before, with V8's own heuristic.
  }
}

const setByOperator = (): boolean =>
  [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'));

/** Caps the heap's growth per full collection at `percent` until the returned release is called. */
export function capHeapGrowth(percent: number): () => void {
  if (!(percent > 0) || setByOperator()) return () => undefined;
  if (holders++ === 0) setGrowth(Math.round(percent));
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) setGrowth(0);
  };
}

/** How many catch-ups hold the cap now (tests). */
export const heapGrowthHolders = (): number => holders;
