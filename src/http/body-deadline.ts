// A JSON or form body has BODY_TIMEOUT_MS (30 s unless set) to arrive, counted from when it starts
// being read. Node alone gives a request 5 minutes, and the body budget (body-budget.ts) only bounds
// the bytes held at once: one client sending most of a body on each connection and then nothing would
// keep its share of the budget (and memory) for those 5 minutes, and from enough addresses the whole. Past the deadline the request is answered 408 (the body was never looked at, so
// sending it again is safe: 408 says so to HTTP clients), its connection closed, its place given back.
// Multipart uploads (the dashboard's customer file: signed-in managers only, written to disk rather
// than held, outside the budget, up to 100 MB that a slow line needs minutes for) keep Node's 5 minutes.
import { ApiError } from '../core/errors';

/** The answer to a body that did not arrive in time: nothing of it was read, send it again whole. */
export function bodyTimeout(ms: number): ApiError {
  const within = ms % 1000 === 0 ? `${ms / 1000} seconds` : `${ms} ms`;
  return new ApiError(
    408,
    'VALIDATION_ERROR',
    `The request body did not arrive within ${within}: nothing was done; send the request again, its whole body at once`,
    undefined,
    // The rest of the body may still be on its way: the connection cannot carry another request.
    { connection: 'close' },
  );
}

/**
 * `reading` (a body parser's promise), or a 408 once `ms` pass first, after `onLate` (which closes the
 * connection after the answer, whatever format a route answers errors in). The parser is left to fail
 * on its own when the connection closes; its failure then is nobody's.
 */
export function readWithin<T>(reading: Promise<T>, ms: number, onLate: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reading.catch(() => {});
      onLate();
      reject(bodyTimeout(ms));
    }, ms);
  });
  return Promise.race([reading, late]).finally(() => clearTimeout(timer));
}
