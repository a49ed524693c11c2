import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Runtime } from '../runtime';
import { newRequestId } from './request-id';
import { STRICT_TRANSPORT_SECURITY, sendsStrictTransportSecurity } from './transport-security';

/** Node's parser errors, by the status Node itself would answer. */
function statusFor(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW')
    // The request line counts too: a long query string (hundreds of ids, a filter pasted twice) lands here.
    return {
      status: 431,
      message: `The request line and headers are larger than ${maxHeaderSize} bytes: shorten the query string (one value per parameter) or the headers`,
    };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, message: 'The request was not received in time' };
  return { status: 400, message: 'The request is not valid HTTP/1.1' };
}

/**
 * `clientError` listener: a request Node's HTTP parser refuses never reaches Koa, so without this it
 * gets Node's bare status line. Here it gets the envelope with a request id (also in the header and the
 * access log), and the connection is closed, as Node would.
 */
export function clientErrorHandler(rt: Runtime) {
  // Decided from BASE_URL as configured, as createApp decides it (a PORT=0 start rewrites it afterwards).
  const hsts = sendsStrictTransportSecurity(rt.config.baseUrl)
    ? `strict-transport-security: ${STRICT_TRANSPORT_SECURITY}\r\n`
    : '';
  return (err: Error & { code?: string }, socket: Socket) => {
    // Nothing can be answered on a reset or already answered socket.
    const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || busy?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, message } = statusFor(err.code);
    const requestId = newRequestId();
    const body = JSON.stringify({ error: { code: 'VALIDATION_ERROR', message, request_id: requestId } });
    // The server allows half-open sockets: end() alone would leave this one to the client to close
    // (a slow client could hold it for ever), so it is destroyed once written, or after a second.
    const fallback = setTimeout(() => socket.destroy(), 1_000);
    fallback.unref();
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        // As every other answer (server.ts): no cache keeps it, no client guesses its type.
        'cache-control: no-store\r\n' +
        'x-content-type-options: nosniff\r\n' +
        hsts +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        'connection: close\r\n\r\n' +
        body,
      () => {
        clearTimeout(fallback);
        socket.destroy();
      },
    );
    rt.accessLog.write({
      request_id: requestId,
      method: '-',
      route: '(unparsed request)',
      status,
      duration_ms: 0,
      restaurant_id: null,
      credential_id: null,
      ip: socket.remoteAddress ?? '',
    });
  };
}
