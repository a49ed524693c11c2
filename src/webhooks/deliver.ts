// One delivery attempt over HTTP(S): signed, with the service's headers and the endpoint's own, a
// timeout for the whole exchange, no redirects followed, and the SSRF rule applied to the address the
// socket actually connects to (target.ts). Returns what happened; never throws for the target's fault.

import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { responseExcerpt } from './excerpt';

/** The shortest custom header value redacted from an answer (characters). */
const MIN_KEPT_HEADER_CHARS = 8;

import { ATTEMPT_TIMEOUT_MS, type AttemptResult } from './schedule';
import { signatureHeader } from './signature';
import { guardedLookup, targetUrlProblem } from './target';

export interface AttemptRequest {
  url: string;
  body: string;
  /** Plain signing secrets, the current one first (two during a rotation's grace period). */
  secrets: string[];
  /** Unix seconds of the service clock: the signature's t. */
  timestamp: number;
  attempt: number;
  deliveryId: string;
  logId: string;
  /** ISO time of the event (X-Service-Timestamp). */
  eventTime: string;
  test?: boolean;
  /**
   * Values of the body that are not its own customer's (another customer it describes: stand-ins.ts):
   * an answer echoing them keeps them as [redacted], like a secret, so the answer (sealed with the
   * body's customer's key) holds nothing of theirs.
   */
  othersData?: readonly string[];
  customHeaders: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs?: number;
  /**
   * The service is stopping: an attempt still waiting for its answer is cut at once and reported as
   * `stopped` (never sent when the signal is already aborted), so a stop does not wait out the timeout.
   */
  signal?: AbortSignal;
  /** Tests: resolve names without the system resolver. */
  resolver?: (
    host: string,
    cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => void;
}

export interface AttemptResponse extends AttemptResult {
  durationMs: number;
  /** The answer's bounded excerpt (excerpt.ts: 512 code points, controls visible, secrets redacted); never logged. */
  bodyExcerpt: string | null;
  /** The answer was longer than its excerpt. */
  excerptTruncated: boolean;
  message: string | null;
  /**
   * Cut by `signal` (the service stopping) before an answer came: the endpoint may or may not have
   * received it. Not an answer of the target's: the caller hands the attempt back rather than record it.
   */
  stopped?: boolean;
}

/** What an attempt cut by a stop reports (see `AttemptRequest.signal`). */
export const STOPPED_MESSAGE = 'the service stopped before the endpoint answered';

/**
 * Connections are kept alive between attempts. An endpoint closes an idle one when it chooses; an
 * attempt that takes such a connection as it closes is reset before the endpoint read it (`reusedSocket`
 * and ECONNRESET/EPIPE, no answer): that attempt is made again at once on a new connection (below),
 * as Node's documentation advises, rather than recorded as a network failure and retried 5 s later.
 * Idle connections are also dropped on our side after IDLE_SOCKET_MS (and before the idle timeout an
 * endpoint announces in `Keep-Alive: timeout=N`, which Node's agent honours only when it has a timeout
 * of its own), which makes that race rare.
 */
const IDLE_SOCKET_MS = 4_000;
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: IDLE_SOCKET_MS }),
};
/** Errors of a kept-alive connection the endpoint closed before reading the request. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
const MAX_READ = 64 * 1024;

export const USER_AGENT = 'Couvert-Webhooks/1';

export function deliveryHeaders(req: AttemptRequest): Record<string, string> {
  return {
    ...req.customHeaders,
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'service-signature': signatureHeader(req.secrets, req.timestamp, req.body),
    'x-service-attempt': String(req.attempt),
    'x-service-delivery': req.deliveryId,
    'x-service-delivery-log-id': req.logId,
    'x-service-timestamp': req.eventTime,
    ...(req.test ? { 'x-service-test': 'true' } : {}),
  };
}

export function sendAttempt(req: AttemptRequest): Promise<AttemptResponse> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    /** Takes the stop listener off `req.signal` (a long-lived signal: one listener per attempt would pile up). */
    let detach = () => {};
    const finish = (
      r: Omit<AttemptResponse, 'durationMs' | 'excerptTruncated'> & { excerptTruncated?: boolean },
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      detach();
      resolve({ excerptTruncated: false, ...r, durationMs: Math.round(performance.now() - started) });
    };
    // The rules an endpoint's URL was saved under, again: the URL may have been saved under other
    // rules (WEBHOOK_ALLOW_PRIVATE_TARGETS on then, an older version). Node connects to a literal
    // address without calling the socket's lookup (guardedLookup), so this is what refuses one.
    const problem = targetUrlProblem(req.url, req.allowPrivate);
    if (problem) {
      finish({ status: null, error: 'blocked_target', bodyExcerpt: null, message: `url ${problem}` });
      return;
    }
    if (req.signal?.aborted) {
      finish({ status: null, error: 'network', bodyExcerpt: null, message: STOPPED_MESSAGE, stopped: true });
      return;
    }
    const url = new URL(req.url);
    const secure = url.protocol === 'https:';
    const body = Buffer.from(req.body);
    const signed = deliveryHeaders(req);
    const headers = { ...signed, 'content-length': String(body.length) };
    // An endpoint echoing the request must not make Couvert keep a secret or a signature.
    const neverKept = [
      ...req.secrets,
      ...(signed['service-signature'] ?? '')
        .split(',')
        .flatMap((p) => (p.startsWith('v1=') ? [p.slice(3)] : [])),
      ...(req.othersData ?? []),
      // Custom header values carry the partner's credentials; a short one (a flag, an account number)
      // would redact unrelated text of the answer.
      ...Object.values(req.customHeaders).filter((v) => v.length >= MIN_KEPT_HEADER_CHARS),
    ];
    const options = (fresh: boolean): https.RequestOptions => ({
      method: 'POST',
      headers,
      // The repeat after a stale kept-alive connection opens a connection of its own.
      agent: fresh ? false : secure ? agents.https : agents.http,
      lookup: guardedLookup(req.allowPrivate, req.resolver),
    });
    let request: http.ClientRequest;
    /**
     * The answer once its status line came: that decides the attempt. Its body is read only for the
     * excerpt, MAX_READ bytes at the most: an endpoint that answered 2xx in time and then sends a
     * body without end (a huge page, a stream) or one that trickles past the timeout has answered,
     * and is neither read to its end nor taken for a timeout (retried: sent again though it was
     * accepted).
     */
    let answer: { status: number | null; chunks: Buffer[]; size: number } | null = null;
    const answered = (cut: boolean) => {
      if (!answer) return;
      const excerpt = responseExcerpt(Buffer.concat(answer.chunks), neverKept, cut || answer.size > MAX_READ);
      finish({
        status: answer.status,
        error: null,
        bodyExcerpt: excerpt?.text ?? null,
        excerptTruncated: excerpt?.truncated ?? false,
        message: null,
      });
    };
    const send = (fresh: boolean) => {
      request = (secure ? https : http).request(url, options(fresh), (res) => {
        const got = { status: res.statusCode ?? null, chunks: [] as Buffer[], size: 0 };
        answer = got;
        res.on('data', (c: Buffer) => {
          if (got.size < MAX_READ) got.chunks.push(c);
          got.size += c.length;
          if (got.size > MAX_READ) {
            answered(true);
            res.destroy();
          }
        });
        res.on('end', () => answered(false));
        // Cut while its body was coming (a reset, a short body): the status stands, with what came.
        res.on('error', () => answered(true));
      });
      const sent = request;
      sent.on('error', (err: NodeJS.ErrnoException) => {
        if (settled) return;
        // Its status line came, then the connection was cut while the body was coming (the endpoint
        // answered 400 and reset it): that answer decides, as at the timeout, not a network error
        // (retried: a final 4xx sent again for hours).
        if (answer) return answered(true);
        if (!fresh && sent.reusedSocket && STALE_CONNECTION.has(err.code ?? '')) {
          send(true);
          return;
        }
        const blocked = err.name === 'BlockedTargetError' || err.code === 'EBLOCKEDTARGET';
        finish({
          status: null,
          error: blocked ? 'blocked_target' : 'network',
          bodyExcerpt: null,
          message: blocked ? err.message : (err.code ?? 'network error'),
        });
      });
      sent.end(body);
    };
    timer = setTimeout(() => {
      request.destroy();
      // Answered in time, its body still coming: the status decides, with what came of the body.
      if (answer) return answered(true);
      finish({
        status: null,
        error: 'timeout',
        bodyExcerpt: null,
        message: `no answer within ${req.timeoutMs ?? ATTEMPT_TIMEOUT_MS} ms`,
      });
    }, req.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
    const onStop = () => {
      // Answered already, its body still coming: the status stands, as at the timeout; handed back as
      // unanswered, the attempt would be made again at the next start though the endpoint took it.
      if (answer) answered(true);
      else
        finish({
          status: null,
          error: 'network',
          bodyExcerpt: null,
          message: STOPPED_MESSAGE,
          stopped: true,
        });
      request.destroy();
    };
    req.signal?.addEventListener('abort', onStop, { once: true });
    detach = () => req.signal?.removeEventListener('abort', onStop);
    send(false);
  });
}
