import { writeSync } from 'node:fs';
import pino, { type Logger } from 'pino';

// Secrets never reach a log line: the Authorization header, tokens, secrets, passwords and codes are
// redacted wherever they appear, and access-log lines are built from an allow-list of fields.
export const REDACT = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.token',
  '*.access_token',
  '*.client_secret',
  '*.secret',
  '*.password',
  '*.code',
  '*.code_verifier',
  'token',
  'secret',
  'password',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'couvert' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** One access-log line: an allow-list of fields, never headers or bodies. */
export interface AccessEntry {
  request_id: string;
  method: string;
  route: string;
  status: number;
  duration_ms: number;
  restaurant_id: string | null;
  credential_id: string | null;
  ip: string;
}

export interface AccessLog {
  write(entry: AccessEntry): void;
  /** Writes what is pending and stops the timer (Runtime.close). */
  close(): void;
}

const INFO = 30;
/** Lines per write (~75 KiB): each write call costs about as much as formatting 30 lines. */
const BATCH = 256;
/** Pieces of one line (keys and values) as `write` stores them. */
const PIECES = 19;
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };
// Most values (ids, methods, declared routes, addresses) need no escaping: quote them as they are and
// leave JSON.stringify to the rest (client-sent paths, forwarded addresses).
const PLAIN = /^[\w.:/@{}-]*$/;
const quote = (v: string) => (PLAIN.test(v) ? `"${v}"` : JSON.stringify(v));
/** Quoted forms of values that repeat from line to line (routes, addresses, restaurant and key ids). */
const MEMO_MAX = 1024;
/** Longer values (client-sent paths) are not kept: 1,024 of them could pin megabytes. */
const MEMO_VALUE_MAX = 200;

/**
 * The access log, one line per request. The line is the application logger's format (level, time as
 * an ISO string, service, log, msg) but built directly from the allow-listed fields: pino's generic serialisation costs more than
 * the rest of a small request. Lines are handed to a pino destination (sonic-boom: partial writes,
 * EAGAIN on pipes) in batches of 256 lines or every 200 ms, whichever comes first: a write per request costs
 * more than the request under load, and sonic-boom's own minLength buffering costs ~4 µs a line.
 * Runtime.close() and process exit (an uncaught exception included) write what is left. Disabled (a
 * level above info), it opens nothing and starts nothing.
 */
export function createAccessLog(level: string, destination?: pino.DestinationStream): AccessLog {
  const enabled = level !== 'silent' && (LEVELS[level] ?? INFO) <= INFO;
  if (!enabled) return { write() {}, close() {} };
  const dest = destination ?? pino.destination({ dest: 1, sync: false });
  const memo = new Map<string, string>();
  const str = (v: string | null) => {
    if (v === null) return 'null';
    let q = memo.get(v);
    if (q === undefined) {
      q = quote(v);
      if (v.length > MEMO_VALUE_MAX) return q;
      if (memo.size >= MEMO_MAX) memo.clear();
      memo.set(v, q);
    }
    return q;
  };
  // The pieces of the lines not yet written, in one array reused from batch to batch and joined once per
  // batch: concatenating each line first would allocate a string per piece and copy every line twice,
  // and a fresh array per batch would be copied as it grows.
  const pending: (string | number)[] = new Array(BATCH * PIECES).fill('');
  let filled = 0;
  const take = () => {
    const chunk = filled >= pending.length ? pending.join('') : pending.slice(0, filled).join('');
    filled = 0;
    return chunk;
  };
  const drain = () => {
    if (filled > 0) dest.write(take());
  };
  // `time` as the application's lines write it (createLogger: pino's isoTime), so one stdout holds one
  // type per field (a log pipeline maps `time` once); formatted once per millisecond under load.
  let lastMs = -1;
  let lastTime = '';
  const time = () => {
    const ms = Date.now();
    if (ms !== lastMs) {
      lastMs = ms;
      lastTime = `"${new Date(ms).toISOString()}"`;
    }
    return lastTime;
  };
  const timer = setInterval(drain, 200);
  timer.unref();
  const onExit = () => {
    if (filled === 0) return;
    const chunk = take();
    try {
      dest.write(chunk);
      (dest as { flushSync?: () => void }).flushSync?.();
    } catch {
      // pino's own exit hook may have ended the destination already: write straight to stdout.
      if (!destination) writeSync(1, chunk);
    }
  };
  process.once('exit', onExit);
  return {
    write(e) {
      // Request ids are unique (not memoised) and, being ours or matching REQUEST_ID_PATTERN, plain.
      const id = PLAIN.test(e.request_id) ? e.request_id : JSON.stringify(e.request_id).slice(1, -1);
      const p = pending;
      let i = filled;
      p[i++] = '{"level":30,"time":';
      p[i++] = time();
      p[i++] = ',"service":"couvert","log":"access","request_id":"';
      p[i++] = id;
      p[i++] = '","method":';
      p[i++] = str(e.method);
      p[i++] = ',"route":';
      p[i++] = str(e.route);
      p[i++] = ',"status":';
      p[i++] = e.status;
      p[i++] = ',"duration_ms":';
      p[i++] = Math.round(e.duration_ms * 1000) / 1000;
      p[i++] = ',"restaurant_id":';
      p[i++] = str(e.restaurant_id);
      p[i++] = ',"credential_id":';
      p[i++] = str(e.credential_id);
      p[i++] = ',"ip":';
      p[i++] = str(e.ip);
      p[i++] = ',"msg":"access"}\n';
      filled = i;
      if (filled >= BATCH * PIECES) drain();
    },
    close() {
      clearInterval(timer);
      process.removeListener('exit', onExit);
      drain();
      // Synchronously: the process may exit right after (main.ts), and an asynchronous write still
      // queued, or the rest of a partial write to a full pipe, would be lost.
      const d = dest as { flushSync?: () => void; flush?: () => void };
      try {
        d.flushSync ? d.flushSync() : d.flush?.();
      } catch {
        d.flush?.(); // sonic-boom refuses flushSync while its file is still opening
      }
    },
  };
}

/** The access log through an existing logger (tests capture lines this way). */
export const accessLogVia = (logger: Logger): AccessLog => ({
  write: (e) => logger.info(e, 'access'),
  close: () => logger.flush?.(),
});

export type { Logger };
