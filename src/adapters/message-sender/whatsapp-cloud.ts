// The WhatsApp Business Cloud API adapter: `POST {base}/{version}/{phone-number-id}/messages` with a
// bearer token and a `template` message. Its answers map to the port's SendResult:
//
//   200 {messages: [{id}]}                         accepted
//   131026, 131021, 131030, 1013, 100 on `to`      refused invalid_recipient   (final outcome)
//   132000–132999                                  refused template_unavailable (final outcome)
//   4, 80007, 130429, 131048, 131056, HTTP 429     refused rate_limited  (retried here, then 502)
//   190, 0, 10, 102, 200–299, HTTP 401/403         refused auth          (502)
//   131031, 131042, 133010, 368, no number id,     refused not_configured (502)
//   100 subcode 33 (no such sending number id)
//   1, 2, 131000, 131016, HTTP 5xx, other errors   refused unavailable   (retried here, then 502)
//   could not connect                              refused unavailable   (retried: nothing was sent)
//   sent, then no answer (timeout, cut)            unknown (never retried: it may have been accepted)
//   HTTP 502/504 without a Graph error             unknown (a gateway's word that WhatsApp's answer
//                                                  never came: as a lost answer, never retried)
//
// Only what was certainly not accepted is retried (a refusal, or no connection at all); the Cloud API
// has no idempotency key, so a request whose answer was lost is never sent again.
import http from 'node:http';
import https from 'node:https';
import { providerErrorSummary } from '../../../commands/missed-calls/provider-error-summary';
import type { Logger } from '../../logger';
import {
  isE164,
  type MessageSender,
  type OutgoingMessage,
  type RefusalKind,
  type SendResult,
} from '../../ports/message-sender';

export interface WhatsAppCloudOptions {
  accessToken: string;
  /** https://graph.facebook.com in production; a loopback server in tests. */
  baseUrl: string;
  /** Graph API version, e.g. v21.0. */
  apiVersion: string;
  /** Longest wait for an answer once the request is sent (ms). */
  timeoutMs: number;
  /** Extra tries after a refusal that may pass later (rate limit, provider failure, no connection). */
  maxRetries: number;
  /** First backoff (ms), doubled each retry. */
  retryBaseMs: number;
  logger?: Pick<Logger, 'warn'>;
  /**
   * The service is stopping (rt.stopping, aborted a moment after a stop begins): a request still
   * waiting for its answer is cut at once and reported `unknown` (it may have been accepted: never
   * sent again), one not yet connected `unavailable` (nothing was sent), and no further retry is made.
   * The missed call's request is then answered, its outcome recorded, before the stores close.
   */
  signal?: AbortSignal;
}

export interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_data?: { details?: string };
  /** Meta's id of the request, for its support. */
  fbtrace_id?: string;
}

type Exchange =
  | { kind: 'answer'; status: number; body: unknown }
  | { kind: 'no_connection'; message: string }
  | { kind: 'no_answer'; message: string };

const RECIPIENT = new Set([131026, 131021, 131030, 1013]);
const RATE = new Set([4, 80007, 130429, 131048, 131056]);
const AUTH = new Set([190, 0, 10, 102]);
const ACCOUNT = new Set([131031, 131042, 133010, 368]);

/** The port's refusal for a Graph API error answer. Pure; exported for tests. */
export function classifyGraphError(status: number, error: GraphError | undefined): RefusalKind {
  const code = error?.code;
  if (code !== undefined) {
    if (RECIPIENT.has(code)) return 'invalid_recipient';
    if (code >= 132000 && code < 133000) return 'template_unavailable';
    if (RATE.has(code)) return 'rate_limited';
    if (AUTH.has(code) || (code >= 200 && code < 300)) return 'auth';
    if (ACCOUNT.has(code)) return 'not_configured';
    // "Unsupported post request. Object with ID '…' does not exist": the restaurant's sending number id
    // is not one WhatsApp knows (a typo, a number removed from the account). Not WhatsApp being down.
    if (code === 100 && error?.error_subcode === 33) return 'not_configured';
    // Invalid parameter on the recipient field.
    if (
      code === 100 &&
      /\bto\b|phone|recipient/i.test(`${error?.message ?? ''} ${error?.error_data?.details ?? ''}`)
    )
      return 'invalid_recipient';
  }
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  return 'unavailable';
}

const RETRYABLE: readonly RefusalKind[] = ['rate_limited', 'unavailable'];

/**
 * A gateway's 502/504 that carries no Graph error: WhatsApp's answer was lost behind it (it may have
 * accepted the message). A 5xx with a Graph error (131016, 1, 2…) is WhatsApp's own refusal. Pure.
 */
export const lostBehindGateway = (status: number, error: GraphError | undefined): boolean =>
  (status === 502 || status === 504) && typeof error?.code !== 'number';

export class WhatsAppCloudSender implements MessageSender {
  readonly name = 'whatsapp-cloud';
  readonly idempotent = false;

  constructor(private readonly options: WhatsAppCloudOptions) {}

  async send(message: OutgoingMessage): Promise<SendResult> {
    if (!isE164(message.to))
      return {
        status: 'refused',
        kind: 'invalid_recipient',
        code: null,
        // Never the number itself: this text is recorded in the call's MessageFailed, which is not sealed.
        message: 'the recipient is not an E.164 number',
      };
    if (!message.from_phone_number_id)
      return {
        status: 'refused',
        kind: 'not_configured',
        code: null,
        message:
          'the restaurant has no whatsapp_phone_number_id (missed-calls configure --whatsapp-phone-number-id)',
      };
    const url = new URL(
      `${this.options.baseUrl.replace(/\/$/, '')}/${this.options.apiVersion}/${encodeURIComponent(message.from_phone_number_id)}/messages`,
    );
    const payload = JSON.stringify(requestBody(message));
    let last: SendResult | null = null;
    const signal = this.options.signal;
    for (let attempt = 0; attempt <= this.options.maxRetries; attempt++) {
      if (attempt > 0) await pause(this.options.retryBaseMs * 2 ** (attempt - 1), signal);
      if (signal?.aborted)
        return (
          last ?? {
            status: 'refused',
            kind: 'unavailable',
            code: null,
            message: STOPPING + ' before sending',
          }
        );
      const exchange = await this.post(url, payload);
      const result = toResult(exchange);
      if (result.status !== 'refused' || !RETRYABLE.includes(result.kind)) return result;
      last = result;
      // Named by the attempt's key (`<missed_call_id>.<attempt>`, never the number); "retrying" only
      // when a retry follows: the last refusal used to say it too, and no retry came.
      const retrying = attempt < this.options.maxRetries;
      this.options.logger?.warn(
        {
          provider: 'whatsapp-cloud',
          idempotency_key: message.idempotency_key,
          kind: result.kind,
          code: result.code,
          attempt: attempt + 1,
        },
        retrying
          ? 'WhatsApp refused the message (nothing was sent); retrying'
          : `WhatsApp refused the message (nothing was sent) ${attempt + 1} time(s); no retry left`,
      );
    }
    return last as SendResult;
  }

  private post(url: URL, payload: string): Promise<Exchange> {
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Exchange>((resolve) => {
      let connected = false;
      let done = false;
      let deadline: NodeJS.Timeout | undefined;
      const signal = this.options.signal;
      const finish = (e: Exchange) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onStop);
        resolve(e);
      };
      // The service is stopping: no answer is awaited any longer (see WhatsAppCloudOptions.signal).
      const onStop = () => {
        req.destroy(new Error(STOPPING));
        finish(
          connected
            ? { kind: 'no_answer', message: `${STOPPING} before the answer came` }
            : { kind: 'no_connection', message: `could not connect: ${STOPPING}` },
        );
      };
      const req = client.request(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${this.options.accessToken}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            accept: 'application/json',
          },
          // A fresh connection per message: a reused socket the server already closed would turn a
          // refused connection (safe to retry) into a lost answer (not).
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size <= 1_000_000) chunks.push(c);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: unknown = null;
            try {
              body = text ? JSON.parse(text) : null;
            } catch {
              body = null;
            }
            finish({ kind: 'answer', status: res.statusCode ?? 0, body });
          });
          res.on('error', (err) => finish({ kind: 'no_answer', message: err.message }));
        },
      );
      req.on('socket', (socket) => {
        // Over TLS the request is written once the handshake is done; a failed handshake sent nothing.
        const ready = url.protocol === 'https:' ? 'secureConnect' : 'connect';
        if (!socket.connecting && ready === 'connect') connected = true;
        else socket.once(ready, () => (connected = true));
      });
      req.setTimeout(this.options.timeoutMs, () => {
        req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`));
      });
      // The socket's timeout is an idle one: a server sending a byte now and then would hold the
      // missed call's report open for as long as it liked. The whole exchange gets the same bound.
      deadline = setTimeout(() => {
        const message = `no complete answer within ${this.options.timeoutMs} ms`;
        req.destroy(new Error(message));
        // An answer already begun is not the request's to fail: settle here either way.
        finish(
          connected
            ? { kind: 'no_answer', message }
            : { kind: 'no_connection', message: `could not connect: ${message}` },
        );
      }, this.options.timeoutMs);
      req.on('error', (err) =>
        finish(
          connected
            ? { kind: 'no_answer', message: err.message }
            : { kind: 'no_connection', message: `could not connect: ${err.message}` },
        ),
      );
      signal?.addEventListener('abort', onStop, { once: true });
      req.end(payload);
      if (signal?.aborted) onStop();
    });
  }
}

const STOPPING = 'cut: the service is stopping';

/** Waits `ms`, or less if `signal` aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A parameter's text as WhatsApp takes it: no new line or tab and at most 4 spaces in a row, or the
 * whole message is refused (#132018, "Param text cannot have new-line/tab characters or more than 4
 * consecutive spaces") and the guest hears nothing. A name typed over two lines is still their name.
 */
export const parameterText = (value: string) => value.replace(/\s+/g, ' ').trim();

export function requestBody(message: OutgoingMessage): Record<string, unknown> {
  const parameters = message.template.parameters.map((p) =>
    message.template.form === 'named'
      ? { type: 'text', parameter_name: p.name, text: parameterText(p.value) }
      : { type: 'text', text: parameterText(p.value) },
  );
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: message.to,
    type: 'template',
    template: {
      name: message.template.name,
      language: { code: message.template.language },
      ...(parameters.length ? { components: [{ type: 'body', parameters }] } : {}),
    },
    // Echoed in the provider's status webhooks: ties a delivery report to the attempt.
    biz_opaque_callback_data: message.idempotency_key,
  };
}

function toResult(e: Exchange): SendResult {
  if (e.kind === 'no_connection')
    return { status: 'refused', kind: 'unavailable', code: null, message: e.message };
  if (e.kind === 'no_answer') return { status: 'unknown', message: e.message };
  const body = (e.body ?? {}) as { messages?: { id?: unknown }[]; error?: GraphError };
  if (e.status >= 200 && e.status < 300) {
    const id = body.messages?.[0]?.id;
    if (typeof id === 'string' && id)
      return { status: 'accepted', provider: 'whatsapp-cloud', provider_message_id: id, left_machine: true };
    // A success without a message id: it was accepted, but we cannot say which message it is.
    return { status: 'unknown', message: `HTTP ${e.status} without a message id` };
  }
  const error = body.error;
  // 502 Bad Gateway or 504 Gateway Timeout with no Graph error in it: a proxy in front of WhatsApp
  // answering that WhatsApp's own answer did not come (or made no sense). The request may have reached
  // WhatsApp and been accepted there: that is a lost answer, not a refusal, and a retry could send the
  // guest a second message.
  if (lostBehindGateway(e.status, error))
    return {
      status: 'unknown',
      message: `HTTP ${e.status} from a gateway, without WhatsApp's answer: the message may have been accepted`,
    };
  const kind = classifyGraphError(e.status, error);
  return {
    status: 'refused',
    kind,
    // Stored in clear beside the summary: a number, as Graph gives it, or nothing.
    code: Number.isSafeInteger(error?.code) ? String(error?.code) : null,
    message: refusalSummary(e.status, error),
  };
}

/**
 * What is kept of a refusal (the log's `MessageFailed.error`, in clear): the HTTP status and Graph's
 * codes, type and trace id, each only when it has the shape Graph gives it. Never Graph's `message`
 * nor its `error_data.details`: free text that may echo the recipient's number or the message
 * (docs/MISSED-CALLS.md, "Personal data"). Pure.
 */
export function refusalSummary(status: number, error: GraphError | undefined): string {
  if (error === undefined || typeof error !== 'object' || error === null)
    return providerErrorSummary({ status });
  return providerErrorSummary({
    status,
    code: Number.isSafeInteger(error.code) ? error.code : undefined,
    subcode: Number.isSafeInteger(error.error_subcode) ? error.error_subcode : undefined,
    type:
      typeof error.type === 'string' && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(error.type)
        ? error.type
        : undefined,
    fbtrace_id:
      typeof error.fbtrace_id === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(error.fbtrace_id)
        ? error.fbtrace_id
        : undefined,
  });
}
