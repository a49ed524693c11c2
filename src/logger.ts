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
 * The access log, one line per request. The line is pino's own format (level, time, service, log,
 * msg) but built directly from the allow-listed fields: pino's generic serialisation costs more than
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
  let pending: string[] = [];
  const drain = () => {
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    dest.write(chunk);
  };
  const timer = setInterval(drain, 200);
  timer.unref();
  const onExit = () => {
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
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
      // Request ids are unique: quoted without the memo.
      pending.push(
        `{"level":30,"time":${Date.now()},"service":"couvert","log":"access","request_id":${quote(e.request_id)},"method":${str(e.method)},"route":${str(e.route)},"status":${e.status},"duration_ms":${Math.round(e.duration_ms * 1000) / 1000},"restaurant_id":${str(e.restaurant_id)},"credential_id":${str(e.credential_id)},"ip":${str(e.ip)},"msg":"access"}\n`,
      );
      if (pending.length >= BATCH) drain();
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
