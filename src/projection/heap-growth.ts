// A long catch-up on the embedded store (an embedded start replays the whole log) keeps every read
// model in the heap and replaces its documents version after version: the old-space garbage V8
// lets pile up between two full collections grows with the live heap (V8 picks a growing factor of
// up to 4 after each one), and that garbage is most of the peak RSS above the read models themselves.
// While such a catch-up runs, the heap may grow per full collection by a percent (V8's
// --heap-growing-percent) chosen after each one from what it left live: `percent` while the heap is
// small, then at most `headroomBytes` of growth (growthPercent). A fixed percent let the garbage grow
// with the read models (35 % of 500 MB is 175 MB of the peak); a fixed headroom bounds it, and marks
// less in all (a full collection's work grows with the live heap, and a percent collected the large
// heaps of the end more often than needed early and less than wanted late). V8's own heuristic comes
// back when the last catch-up holding it ends. A process started with its own --heap-growing-percent
// is left alone.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** Below this, a collection's headroom would be spent in marking more than in applying events. */
export const MIN_GROWTH_PERCENT = 10;
/** The default headroom above the live heap (RunnerOptions.heapHeadroomBytes). */
export const DEFAULT_HEAP_HEADROOM_BYTES = 64 * 2 ** 20;

/**
 * The growth allowed after a full collection that left `liveBytes` live: `maxPercent`, or less once
 * that would be more than `headroomBytes`, never under MIN_GROWTH_PERCENT (nor over maxPercent).
 */
export function growthPercent(liveBytes: number, maxPercent: number, headroomBytes: number): number {
  if (!(liveBytes > 0) || !(headroomBytes > 0)) return maxPercent;
  const byHeadroom = Math.floor((headroomBytes / liveBytes) * 100);
  return Math.max(Math.min(MIN_GROWTH_PERCENT, maxPercent), Math.min(maxPercent, byHeadroom));
}

let holders = 0;
let current = 0;
let observer: PerformanceObserver | null = null;

/** A V8 flag set at run time; a Node whose flags are frozen after start refuses it: no cap then. */
function setGrowth(percent: number): void {
  if (percent === current) return;
  try {
    setFlagsFromString(`--heap-growing-percent=${percent}`);
    current = percent;
  } catch {
    // The replay runs as before, with V8's own heuristic.
  }
}

const setByOperator = (): boolean =>
  [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('heap-growing-percent'));

/**
 * Caps the heap's growth per full collection at `percent`, and at `headroomBytes` above what each
 * full collection leaves live (0: the percent alone), until the returned release is called. Nested
 * holders share the first one's figures.
 */
export function capHeapGrowth(percent: number, headroomBytes = 0): () => void {
  if (!(percent > 0) || setByOperator()) return () => undefined;
  if (holders++ === 0) {
    setGrowth(Math.round(percent));
    if (headroomBytes > 0) {
      // After each full collection (its entry is reported a moment after it), the heap's used size
      // is what it left live plus the little allocated since (young generation included: an
      // overestimate, towards more collections). V8 set the next limit during that collection, so
      // the percent chosen here takes effect from the next one.
      observer = new PerformanceObserver((list) => {
        const major = list
          .getEntries()
          .some(
            (e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
          );
        if (major && holders > 0)
          setGrowth(growthPercent(getHeapStatistics().used_heap_size, Math.round(percent), headroomBytes));
      });
      observer.observe({ entryTypes: ['gc'] });
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holders === 0) {
      observer?.disconnect();
      observer = null;
      setGrowth(0);
    }
  };
}

/** How many catch-ups hold the cap now (tests). */
export const heapGrowthHolders = (): number => holders;
/** The growth percent set now, 0 for V8's own heuristic (tests). */
export const heapGrowthSet = (): number => current;
