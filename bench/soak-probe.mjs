// Loaded into the soak's server process (node --import, before the service): every SOAK_PROBE_MS it
// appends one JSON line to SOAK_PROBE_FILE with the heap (after a full collection when the process runs
// with --expose-gc, so the figure is what stays live, not what awaits collection), the event loop's
// delay since the last line, and the kinds of handles and requests keeping the loop alive (timers,
// sockets, file requests), counted. Plain JavaScript so that it loads before tsx. Not part of the service.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const every = Number(process.env.SOAK_PROBE_MS ?? 10_000);
  // Collections that held the thread long, each with when it ended: a stall is told from a pause.
  let gcLongest = 0;
  let gcTotal = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcTotal += e.duration;
      if (e.duration > gcLongest) gcLongest = e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const sample = () => {
    const gc = { gcLongestMs: Math.round(gcLongest), gcTotalMs: Math.round(gcTotal) };
    globalThis.gc?.();
    gcLongest = 0;
    gcTotal = 0;
    const m = process.memoryUsage();
    const resources = {};
    for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
    const line = {
      at: Date.now(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      lagP99Ms: delay.percentile(99) / 1e6,
      lagMaxMs: delay.max / 1e6,
      ...gc,
      resources,
    };
    delay.reset();
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
  setInterval(sample, every).unref();
}
