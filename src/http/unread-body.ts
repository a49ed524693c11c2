// A body sent to a route that takes none (GET /openapi.json with a payload) is read and dropped before
// the answer is written. Left unread, it stays in the socket's receive buffer; when the connection
// then closes (Connection: close), the kernel resets it instead of closing it, and the client loses
// whatever part of a large answer it had not read yet.
import type { Context } from 'koa';

export const hasUnreadBody = (ctx: Context): boolean =>
  !ctx.req.readableEnded && ((ctx.request.length ?? 0) > 0 || Boolean(ctx.get('transfer-encoding')));

/**
 * Reads and discards the request body, up to `limit` bytes; past it, stops reading and the connection
 * is closed after the answer (a client sending that much to a route without a body gets no guarantee).
 * So after `ms` (the body deadline, body-deadline.ts) when given: a body that stops arriving would
 * otherwise hold the request for Node's 5 minutes. The route is answered as usual either way: it never
 * looked at the body.
 */
export function discardBody(ctx: Context, limit: number, ms?: number): Promise<void> {
  const req = ctx.req;
  return new Promise<void>((resolve, reject) => {
    let size = 0;
    const stop = () => {
      req.pause();
      ctx.set('connection', 'close');
      done();
    };
    const timer = ms === undefined ? undefined : setTimeout(stop, ms);
    const done = (err?: Error) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('aborted', onAborted);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop();
    };
    const onEnd = () => done();
    const onError = (err: Error) => done(err);
    const onAborted = () => done(new Error('request aborted'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('aborted', onAborted);
    req.resume();
  });
}
