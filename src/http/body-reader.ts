// Reading a route's JSON or form body (server.ts calls it once the route is known and its caller
// authenticated): koa-body's parser, under the body budget (body-budget.ts) and the deadline
// BODY_TIMEOUT_MS (body-deadline.ts). A body sent to a route that takes none is dropped under the same
// deadline instead (unread-body.ts).
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { ApiError } from '../core/errors';
import type { Runtime } from '../runtime';
import { clientKey, createBodyBudget, type Refusal } from './body-budget';
import { readWithin } from './body-deadline';
import { bodyParseError } from './body-guard';

/** Reads a request's body into ctx.request (body, rawBody); one per app: its budget is the app's. */
export type BodyReader = (ctx: Context, next: () => Promise<void>) => Promise<unknown>;

export function createBodyReader(rt: Runtime): BodyReader {
  // Parsed only for routes that declare a body, once the route is known: other requests never pay for it.
  const parseBody = koaBody({
    json: true,
    jsonStrict: true,
    // The text as received, for refuseReplacedBytes (src/http/body-text.ts).
    includeUnparsed: true,
    urlencoded: true,
    multipart: false,
    text: false,
    jsonLimit: rt.config.bodyLimitBytes,
    formLimit: rt.config.bodyLimitBytes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (err, ctx) => {
      throw bodyParseError(err, rt.config.bodyLimitBytes, ctx.get('content-encoding'));
    },
  });

  // The bytes of bodies held while they arrive, bounded per client and in all (body-budget.ts): charged
  // as they arrive, so a request that declares a body and sends none costs nothing, and given back
  // once the body is read, refused, cut or late (BODY_TIMEOUT_MS to arrive: body-deadline.ts).
  const bodies = createBodyBudget(rt.config.bodyLimitBytes);
  return async (ctx: Context, next: () => Promise<void>): Promise<unknown> => {
    const client = clientKey(ctx.ip);
    const full = bodies.full(client);
    if (full) throw tooManyBodies(rt, full);
    const req = ctx.req;
    // What the parser holds: the request's bytes, or for a compressed body those of the decoder it
    // pipes the request into (a few compressed bytes can be a limit's worth of text).
    let held: Readable = req;
    req.pipe = function pipe<T extends NodeJS.WritableStream>(
      this: Readable,
      dest: T,
      opts?: { end?: boolean },
    ) {
      if (dest instanceof Readable) held = dest;
      return Readable.prototype.pipe.call(this, dest, opts) as T;
    };
    let charged = 0;
    let refuse: (err: ApiError) => void = () => {};
    const refused = new Promise<never>((_, reject) => {
      refuse = reject;
    });
    const onData = (chunk: Buffer) => {
      const refusal = bodies.take(client, chunk.length);
      if (refusal === null) {
        charged += chunk.length;
        return;
      }
      held.off('data', onData);
      req.unpipe();
      req.pause();
      ctx.res.shouldKeepAlive = false;
      refuse(tooManyBodies(rt, refusal));
    };
    let parsing: Promise<unknown>;
    try {
      parsing = parseBody(ctx, next);
    } finally {
      Reflect.deleteProperty(req, 'pipe');
    }
    // The parser's listeners are on by now when it reads this body at all; one added to a body it
    // leaves alone (a type it does not parse) would set it flowing and lose it for discardBody.
    if (held.listenerCount('data') > 0) held.on('data', onData);
    // A decoder is not told that its request was cut, and the parser then waits on it until the
    // deadline, holding its place: cut it too, as the parser is for an uncompressed body.
    const onAborted = () =>
      held.destroy(Object.assign(new Error('request aborted'), { status: 400, type: 'request.aborted' }));
    if (held !== req) req.once('aborted', onAborted);
    try {
      // Node then answers `connection: close` and closes the connection after the answer.
      return await readWithin(Promise.race([parsing, refused]), rt.config.bodyTimeoutMs, () => {
        ctx.res.shouldKeepAlive = false;
      });
    } finally {
      held.off('data', onData);
      req.off('aborted', onAborted);
      bodies.give(client, charged);
    }
  };
}

/**
 * The answer to a body refused by the budget (body-budget.ts): one client holding its share, 429; the
 * server holding as much as it keeps of bodies in all (a memory safeguard), 503. Nothing was done.
 * Its connection is closed, part of its body unread: when unread bytes are still in the socket's
 * receive buffer as it closes, the kernel resets the connection (unread-body.ts) and a client may lose
 * this answer and see the connection reset instead, which it retries as it would the answer. Reading
 * the rest first would hold a place for a client that is already past its share.
 */
function tooManyBodies(rt: Runtime, refused: Refusal): ApiError {
  const seconds = 5;
  // Node then closes the connection after the answer: the rest of the body may still be on its way.
  if (refused === 'all')
    return new ApiError(
      503,
      'INTERNAL_ERROR',
      'The server is receiving more request bodies than it holds at once: nothing was done; retry in a few seconds',
      { reason: 'TOO_MANY_BODIES' },
      { 'retry-after': String(seconds), connection: 'close' },
    );
  return new ApiError(
    429,
    'RATE_LIMITED',
    'Too many request bodies are being sent from this address at once: nothing was done; wait for those in progress, then retry',
    { reset_at: new Date(rt.clock.now().getTime() + seconds * 1000).toISOString() },
    {
      'x-ratelimit-reset': String(rt.clock.now().getTime() + seconds * 1000),
      'retry-after': String(seconds),
      connection: 'close',
    },
  );
}
