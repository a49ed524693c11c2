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
// thread starved of CPU or waiting; the time it waited on a run queue, runnable but not run, which
// tells the two apart), and the machine's load: a main thread running JavaScript is told from one
// waiting in fsync or on a lock, and both from one the machine does not run.
//
// What the JavaScript is doing, too: at a stall's start the watchdog starts V8's sampling profiler on
// the main thread through the inspector (Session.connectToMainThread: its messages reach a thread
// running JavaScript by an interrupt, so they are served inside the stall, not after it) and stops it
// when the loop turns again (or after SOAK_STALL_PROFILE_MAX_MS, 120 s). The profile is written next
// to SOAK_PROBE_FILE (stall-<time>.cpuprofile, open it in Chrome's DevTools) and a `stallProfile` line
// gives its functions of most self time and its most frequent stack. A stall in native code (a system
// call) holds the profiler's start until it returns: its `stall` lines say so. --report-on-signal would
// not help: Node handles that signal in JavaScript, on the stalled loop.
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
const { workerData: { file, beat, pid, stallMs, profileMaxMs } } = require('node:worker_threads');
const { appendFileSync, readFileSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { Session } = require('node:inspector');
const heartbeat = new Float64Array(beat);
const read = (f) => { try { return readFileSync(f, 'utf8').trim(); } catch (e) { return String(e.code || e); } };
const task = '/proc/' + pid + '/task/' + pid;
const cpuTicks = () => { const f = read(task + '/stat').split(') ')[1]?.split(' ') ?? []; return Number(f[11]) + Number(f[12]); };
// schedstat: ns on a CPU, ns waiting on a run queue (runnable, not run), time slices. The wait is what
// tells a thread starved by the machine from one busy with its own work.
const sched = () => read(task + '/schedstat').split(' ').map(Number);
let session = null;
const post = (method, params) => new Promise((resolve, reject) => {
  session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res)));
});
// The profile running (a promise of the start of the stall it covers) and the stall it was for: one
// profile a stall, even one that outlasts profileMaxMs.
let profiling = null;
let profiled = null;
const frame = (n) => (n.callFrame.functionName || '(anonymous)') + ' ' + n.callFrame.url.replace(/^.*\\/(node_modules|src|bench)\\//, '$1/') + ':' + (n.callFrame.lineNumber + 1);
const summarize = (profile) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map();
  const stacks = new Map();
  for (const id of profile.samples) {
    const n = byId.get(id);
    const name = frame(n);
    self.set(name, (self.get(name) ?? 0) + 1);
    const stack = [];
    for (let at = id; at !== undefined && stack.length < 20; at = parent.get(at)) {
      const f = byId.get(at);
      if (f.callFrame.functionName !== '(root)') stack.push(frame(f));
    }
    const key = stack.join(' < ');
    stacks.set(key, (stacks.get(key) ?? 0) + 1);
  }
  const total = profile.samples.length;
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([f, n]) => f + ' ' + Math.round((100 * n) / total) + '%');
  const [stack, n] = [...stacks].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  return { samples: total, selfTop: top, commonestStack: stack.split(' < '), commonestShare: total ? Math.round((100 * n) / total) : 0 };
};
const startProfile = (since) => {
  profiling = (async () => {
    if (session === null) { session = new Session(); session.connectToMainThread(); }
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 1000 });
    await post('Profiler.start');
    return since;
  })().catch((err) => { appendFileSync(file, JSON.stringify({ stallProfile: { since, failed: String(err) } }) + '\\n'); return null; });
};
const stopProfile = async (now) => {
  const starting = profiling;
  profiling = null;
  const started = await starting;
  if (started === null) return;
  try {
    const { profile } = await post('Profiler.stop');
    const out = join(dirname(file), 'stall-' + new Date(started).toISOString().replace(/[:.]/g, '-') + '.cpuprofile');
    writeFileSync(out, JSON.stringify(profile));
    appendFileSync(file, JSON.stringify({ stallProfile: { since: started, until: now, file: out, ...summarize(profile) } }) + '\\n');
  } catch (err) {
    appendFileSync(file, JSON.stringify({ stallProfile: { since: started, failed: String(err) } }) + '\\n');
  }
  // An open session would hold the process's exit ("Waiting for the debugger to disconnect").
  session?.disconnect();
  session = null;
};
let began = null;
let ticksAtStart = 0;
let schedAtStart = [0, 0];
let lastLine = 0;
setInterval(() => {
  const now = Date.now();
  const stale = now - heartbeat[0];
  // The CPU and run-queue times read last while the loop turned (its heartbeat fresh, not merely
  // younger than stallMs): a stall's times are counted from about its start, not from stallMs into it.
  if (stale < 300) {
    ticksAtStart = cpuTicks();
    schedAtStart = sched();
  }
  if (stale < stallMs) {
    began = null;
    if (profiling !== null) stopProfile(now);
    return;
  }
  if (began === null) began = heartbeat[0];
  if (profiling === null && profiled !== began && profileMaxMs > 0) {
    profiled = began;
    startProfile(began);
  }
  else if (profiling !== null && now - began > profileMaxMs) stopProfile(now);
  if (now - lastLine < 2000) return;
  lastLine = now;
  const stat = read(task + '/stat').split(') ')[1]?.split(' ') ?? [];
  const [onCpu, waiting] = sched();
  const line = { stall: { at: now, since: began, staleMs: stale, state: stat[0], cpuMsSinceAbout: (cpuTicks() - ticksAtStart) * 10,
    onCpuMsSinceAbout: Math.round((onCpu - schedAtStart[0]) / 1e6), runQueueWaitMsSinceAbout: Math.round((waiting - schedAtStart[1]) / 1e6),
    cpuPressure: read('/proc/pressure/cpu').split('\\n')[0],
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
        profileMaxMs: Number(process.env.SOAK_STALL_PROFILE_MAX_MS ?? 120_000),
      },
    },
  );
  watchdog.unref();
}
