// Requests no HTTP client library would send, over a raw socket: a target that is not a URL, headers
// past Node's limit, a malformed header line. Each still answers the spec's envelope with a request id
// (header, body and access log alike). And the client address behind a trusted proxy.
import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { type RunningService, startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { captureLog } from '../helpers/log-sink';
import { demoBootstrap, REQUEST_HANG_MS, startTestService } from '../helpers/service';

const TOKEN = 'couvert_pk_edges_0000000000000000000000000000001';

interface Raw {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
}

/** Sends `request` as bytes and reads until the server closes the connection. */
function raw(port: number, request: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
    });
    socket.on('error', reject);
    socket.setTimeout(10_000, () => reject(new Error(`no answer; got ${JSON.stringify(data)}`)));
    socket.on('close', () => {
      const [head = '', ...rest] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      let body: unknown = null;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = rest.join('\r\n\r\n');
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    socket.write(request);
  });
}

interface Ctx {
  svc: RunningService;
  port: number;
  logs: string[];
}
const t = suite<Ctx>('http edges');

t.before(async (ctx) => {
  const log = captureLog();
  ctx.logs = log.lines;
  ctx.svc = await startService(loadConfig({ PORT: '0', LOG_LEVEL: 'info', ROLES: 'api,projector' }), {
    events: new MemoryEventStore(),
    logger: log.logger,
    demo: false,
  });
  ctx.port = Number(new URL(ctx.svc.url).port);
});
t.after(async (ctx) => {
  await ctx.svc.stop();
});

function assertEnvelope(ctx: Ctx, r: Raw, status: number) {
  assert.is(r.status, status, JSON.stringify(r));
  assert.match(r.headers['content-type'] ?? '', /application\/json/);
  assert.is(r.body.error.code, 'VALIDATION_ERROR');
  assert.type(r.body.error.message, 'string');
  assert.match(r.body.error.request_id, /^req_[0-9a-f]{32}$/);
  assert.is(r.headers['x-request-id'], r.body.error.request_id);
  const line = ctx.logs.find((l) => l.includes(r.body.error.request_id) && l.includes('"access"'));
  assert.ok(line, 'the access log has a line with this request id');
  assert.is(JSON.parse(line as string).status, status);
}

t('a request target that does not parse as a URL answers 400 in the envelope', async (ctx) => {
  const r = await raw(ctx.port, 'GET http://[::1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  assertEnvelope(ctx, r, 400);
  assert.is(r.body.error.details.issues[0].code, 'invalid_url');
});

t('headers past the limit answer 431 in the envelope', async (ctx) => {
  const r = await raw(
    ctx.port,
    `GET /api/partner/v1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
  );
  assertEnvelope(ctx, r, 431);
  // The headers every other answer carries.
  assert.is(r.headers['cache-control'], 'no-store');
  assert.is(r.headers['x-content-type-options'], 'nosniff');
  // A long query string is the likelier cause: the message names the limit and the fix.
  const url = await raw(
    ctx.port,
    `GET /api/partner/v1/reservations?external_id=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  assertEnvelope(ctx, url, 431);
  assert.is(
    url.body.error.message,
    'The request line and headers are larger than 16384 bytes: shorten the query string (one value per parameter) or the headers',
  );
});

t('a malformed header line answers 400 in the envelope', async (ctx) => {
  const r = await raw(ctx.port, 'GET /api/partner/v1 HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
  assertEnvelope(ctx, r, 400);
});

t('garbage instead of a request line answers 400 in the envelope', async (ctx) => {
  const r = await raw(ctx.port, '\x16\x03\x01 not http at all\r\n\r\n');
  assertEnvelope(ctx, r, 400);
});

t(
  'the connection of a refused request is closed by the server even when the client never closes its side',
  async (ctx) => {
    // allowHalfOpen: this client does not answer the server's FIN with its own, as a slow or hostile one may not.
    const socket = connect({ port: ctx.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => {});
    const answered = new Promise((resolve) => socket.once('data', resolve));
    socket.write('GET /api/partner/v1 HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
    await answered;
    const open = () =>
      new Promise<number>((resolve, reject) =>
        ctx.svc.server.getConnections((err, n) => (err ? reject(err) : resolve(n))),
      );
    // Polled until a hang bound (100 looks 20 ms apart were a deadline a loaded machine could miss).
    let left = await open();
    for (const end = Date.now() + REQUEST_HANG_MS; left > 0 && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 20));
      left = await open();
    }
    assert.is(left, 0, 'the server dropped the socket instead of leaving it half-open');
    socket.destroy();
  },
);

t('the service still answers normally afterwards', async (ctx) => {
  const res = await fetch(`${ctx.svc.url}/api/partner/v1`);
  assert.is(res.status, 200);
});

const proxy = suite('client address behind a proxy');

proxy(
  'TRUST_PROXY: the address the proxy appended is the rate-limit key; client-sent entries are not',
  async () => {
    const svc = await startTestService({
      env: { TRUST_PROXY: 'true', RATE_LIMIT_PER_MINUTE: '2' },
      bootstrap: demoBootstrap({}, [{ id: 'k', token: TOKEN, scopes: ['CATALOG_READ'] }]),
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await svc.api('GET', '/me', {
          token: TOKEN,
          headers: { 'x-forwarded-for': `10.0.0.${i}, 203.0.113.9` },
        });
        statuses.push(res.status);
      }
      assert.equal(
        statuses,
        [200, 200, 429, 429],
        'one budget for 203.0.113.9 whatever the client wrote first',
      );
      const other = await svc.api('GET', '/me', {
        token: TOKEN,
        headers: { 'x-forwarded-for': '10.0.0.1, 203.0.113.10' },
      });
      assert.is(other.status, 200, 'another proxied client has its own budget');
    } finally {
      await svc.close();
    }
  },
);

proxy('without TRUST_PROXY, X-Forwarded-For is ignored: the socket address is the key', async () => {
  const svc = await startTestService({
    env: { RATE_LIMIT_PER_MINUTE: '2' },
    bootstrap: demoBootstrap({}, [{ id: 'k', token: TOKEN, scopes: ['CATALOG_READ'] }]),
  });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await svc.api('GET', '/me', {
        token: TOKEN,
        headers: { 'x-forwarded-for': `198.51.100.${i}` },
      });
      statuses.push(res.status);
    }
    assert.equal(statuses, [200, 200, 429]);
  } finally {
    await svc.close();
  }
});

t.run();
proxy.run();
