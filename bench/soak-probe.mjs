// Loaded into the soak's server process (node --import, before the service): every SOAK_PROBE_MS it
// appends one JSON line to SOAK_PROBE_FILE with the heap (after a full collection when the process runs
// with --expose-gc, so the figure is what stays live, not what awaits collection), the event loop's
// delay since the last line, and the kinds of handles and requests keeping the loop alive (timers,
// sockets, file requests), counted. Plain JavaScript so that it loads before tsx. Not part of the service.
//
// A watchdog thread catches a stall while it lasts: when the main thread's heartbeat (every 100 ms) is
// older than SOAK_STALL_MS (3 s), it appends a `stall` line every 2 s with what the main thread is
// doing from the kernel's side (/proc: state R running or D in uninterruptible I/O or S sleeping,
// the system call it is in (number first: 74 fsync, 75 fdatasync, 202 futex, 17 pread64, 1 write), its
// kernel stack, and the CPU time it used since about the stall's start: far below the wall time, a
// thread starved of CPU or waiting), and the machine's load: a main thread running JavaScript is told
// from one waiting in fsync or on a lock.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

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

  const heartbeat = new Float64Array(new SharedArrayBuffer(8));
  heartbeat[0] = Date.now();
  setInterval(() => {
    heartbeat[0] = Date.now();
  }, 100).unref();
  const watchdog = new Worker(
    `
const { workerData: { file, beat, pid, stallMs } } = require('node:worker_threads');
const { appendFileSync, readFileSync } = require('node:fs');
const heartbeat = new Float64Array(beat);
const read = (f) => { try { return readFileSync(f, 'utf8').trim(); } catch (e) { return String(e.code || e); } };
const task = '/proc/' + pid + '/task/' + pid;
const cpuTicks = () => { const f = read(task + '/stat').split(') ')[1]?.split(' ') ?? []; return Number(f[11]) + Number(f[12]); };
let began = null;
let ticksAtStart = 0;
let lastLine = 0;
setInterval(() => {
  const now = Date.now();
  const stale = now - heartbeat[0];
  // The CPU time read last while the loop turned: a stall's CPU time is counted from its start.
  if (stale < stallMs) { began = null; ticksAtStart = cpuTicks(); return; }
  if (began === null) began = heartbeat[0];
  if (now - lastLine < 2000) return;
  lastLine = now;
  const stat = read(task + '/stat').split(') ')[1]?.split(' ') ?? [];
  const line = { stall: { at: now, since: began, staleMs: stale, state: stat[0], cpuMsSinceAbout: (cpuTicks() - ticksAtStart) * 10,
    syscall: read(task + '/syscall'), wchan: read(task + '/wchan'), stack: read(task + '/stack').split('\\n').slice(0, 12),
    loadavg: read('/proc/loadavg'), ioPressure: read('/proc/pressure/io').split('\\n')[0] } };
  appendFileSync(file, JSON.stringify(line) + '\\n');
}, 500);
`,
    {
      eval: true,
      workerData: {
        file,
        beat: heartbeat.buffer,
        pid: process.pid,
        stallMs: Number(process.env.SOAK_STALL_MS ?? 3000),
      },
    },
  );
  watchdog.unref();
}
