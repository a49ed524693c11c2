import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger';

/** A logger at `info` whose lines (access log included, when passed to the runtime) land in `lines`. */
export function captureLog(): { lines: string[]; logger: Logger } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, logger: createLogger('info', sink) };
}
