// A loopback server speaking the WhatsApp Business Cloud API's messages endpoint: it checks the request
// shape (POST /{version}/{phone-number-id}/messages, bearer token, JSON template message) and answers
// what the test scripts next — an accepted message, one of the Graph API's error answers, silence, or
// a cut connection. Every request is kept for the test to read.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: the test reads the JSON the adapter sent
  body: any;
  /** Null when the request did not fit the Cloud API (then the server answered 400 code 100). */
  problem: string | null;
}

export type Script =
  | { kind: 'accept' }
  | { kind: 'error'; status: number; code: number; message?: string; subcode?: number; type?: string }
  /** Never answers (the adapter's timeout fires). */
  | { kind: 'silence' }
  /** Reads the request, then destroys the socket without answering. */
  | { kind: 'cut' }
  /** Answers 200 and sends a byte of its body every `everyMs`, never ending it (an idle timeout never fires). */
  | { kind: 'trickle'; everyMs: number }
  /** Answers this status and body as they are (a gateway's own page in front of the Cloud API). */
  | { kind: 'raw'; status: number; body: string; contentType?: string };

export const GRAPH_ERRORS = {
  rateLimited: { kind: 'error', status: 400, code: 130429, message: 'Rate limit hit' },
  pairRateLimited: {
    kind: 'error',
    status: 400,
    code: 131056,
    message: '(Business Account, Consumer Account) pair rate limit hit',
  },
  undeliverable: { kind: 'error', status: 400, code: 131026, message: 'Message Undeliverable' },
  templatePaused: { kind: 'error', status: 400, code: 132015, message: 'Template is Paused' },
  templateMissing: {
    kind: 'error',
    status: 404,
    code: 132001,
    message: 'Template name does not exist in the translation',
  },
  authExpired: {
    kind: 'error',
    status: 401,
    code: 190,
    message: 'Error validating access token',
    type: 'OAuthException',
  },
  serviceUnavailable: { kind: 'error', status: 503, code: 131016, message: 'Service unavailable' },
} as const satisfies Record<string, Script>;

export class FakeWhatsApp {
  readonly requests: ReceivedRequest[] = [];
  /** Answers for the next requests, in order; when empty, requests are accepted. */
  readonly script: Script[] = [];
  accepted = 0;
  private server!: Server;
  private held: ServerResponse[] = [];
  url = '';

  constructor(
    readonly token = 'EAAtest-token-0001',
    readonly version = 'v21.0',
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const r of this.held) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The port's own sends that the server accepted. */
  acceptedRequests(): ReceivedRequest[] {
    return this.requests.filter(
      (r) => r.problem === null && (r as { answered?: string }).answered === 'accept',
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = null;
      }
      const problem = this.problemOf(req, body);
      const entry: ReceivedRequest & { answered?: string } = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        problem,
      };
      this.requests.push(entry);
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (problem) {
        entry.answered = 'invalid';
        if (problem.startsWith('param text'))
          return json(400, {
            error: {
              message: '(#132018) There was an issue with the parameters in your template.',
              type: 'OAuthException',
              code: 132018,
              error_data: { messaging_product: 'whatsapp', details: problem },
              fbtrace_id: 'AbCdEf',
            },
          });
        return json(problem.startsWith('token') ? 401 : 400, {
          error: {
            message: problem,
            type: 'OAuthException',
            code: problem.startsWith('token') ? 190 : 100,
            fbtrace_id: 'AbCdEf',
          },
        });
      }
      const next = this.script.shift() ?? { kind: 'accept' };
      entry.answered = next.kind;
      if (next.kind === 'silence') {
        this.held.push(res);
        return;
      }
      if (next.kind === 'cut') {
        req.socket.destroy();
        return;
      }
      if (next.kind === 'trickle') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const timer = setInterval(() => res.write(' '), next.everyMs);
        res.on('close', () => clearInterval(timer));
        this.held.push(res);
        return;
      }
      if (next.kind === 'raw') {
        res.writeHead(next.status, { 'content-type': next.contentType ?? 'text/html' });
        res.end(next.body);
        return;
      }
      if (next.kind === 'error')
        return json(next.status, {
          error: {
            message: next.message ?? 'error',
            type: next.type ?? 'OAuthException',
            code: next.code,
            ...(next.subcode ? { error_subcode: next.subcode } : {}),
            error_data: { messaging_product: 'whatsapp', details: next.message ?? 'error' },
            fbtrace_id: 'AbCdEf',
          },
        });
      this.accepted += 1;
      const b = body as { to: string };
      return json(200, {
        messaging_product: 'whatsapp',
        contacts: [{ input: b.to, wa_id: b.to.replace(/^\+/, '') }],
        messages: [{ id: `wamid.TEST${String(this.accepted).padStart(6, '0')}`, message_status: 'accepted' }],
      });
    });
  }

  private problemOf(req: IncomingMessage, body: unknown): string | null {
    if (req.method !== 'POST') return `method ${req.method}`;
    if (!new RegExp(`^/${this.version.replace('.', '\\.')}/\\d+/messages$`).test(req.url ?? ''))
      return `path ${req.url}`;
    if (req.headers.authorization !== `Bearer ${this.token}`) return 'token: missing or wrong bearer token';
    if (!String(req.headers['content-type']).startsWith('application/json')) return 'content-type';
    const b = body as Record<string, unknown> | null;
    if (b?.messaging_product !== 'whatsapp' || b.type !== 'template') return 'not a template message';
    if (typeof b.to !== 'string' || !/^\+?\d{7,15}$/.test(b.to)) return 'to';
    const t = b.template as
      | { name?: unknown; language?: { code?: unknown }; components?: unknown }
      | undefined;
    if (!t || typeof t.name !== 'string' || typeof t.language?.code !== 'string')
      return 'template name and language';
    if (t.components !== undefined) {
      if (!Array.isArray(t.components)) return 'components';
      for (const c of t.components as { type?: unknown; parameters?: unknown }[]) {
        if (c.type !== 'body' || !Array.isArray(c.parameters)) return 'component';
        for (const p of c.parameters as { type?: unknown; text?: unknown }[]) {
          if (p.type !== 'text' || typeof p.text !== 'string' || p.text === '') return 'parameter';
          // The Cloud API's own rule for a parameter's text (#132018).
          if (/[\n\t]| {5}/.test(p.text))
            return 'param text cannot have new-line/tab characters or more than 4 consecutive spaces';
        }
      }
    }
    return null;
  }
}
