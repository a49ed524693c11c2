// A request through an app's Node handler without a socket (in-process benchmarks: bench/inproc.ts,
// bench/privacy-cost.bench.ts `-- inproc`, bench/privacy-parts.bench.ts): what the app's JavaScript
// costs, without the kernel's TCP work.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Duplex } from 'node:stream';

class NullSocket extends Duplex {
  remoteAddress = '127.0.0.1';
  override _write(_c: unknown, _e: string, cb: () => void) {
    cb();
  }
  override _writev(_c: unknown, cb: () => void) {
    cb();
  }
  override _read() {}
  setTimeout() {
    return this;
  }
  setNoDelay() {
    return this;
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => unknown;

/** One request through `handler`; resolves with the answer's status once it is finished. */
export function inProcessRequest(
  handler: Handler,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<number> {
  return new Promise((resolve) => {
    const socket = new NullSocket();
    const req = new IncomingMessage(socket as never);
    req.method = method;
    req.url = url;
    req.headers =
      body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.complete = true;
    if (body !== undefined) req.push(Buffer.from(body));
    req.push(null);
    const res = new ServerResponse(req);
    res.assignSocket(socket as never);
    res.on('finish', () => {
      res.detachSocket(socket as never);
      resolve(res.statusCode);
    });
    handler(req, res);
  });
}

/** A JSON POST with a bearer token. */
export const postJson = (handler: Handler, token: string, url: string, body: string): Promise<number> =>
  inProcessRequest(
    handler,
    'POST',
    url,
    { host: '127.0.0.1', authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  );
