// A JSON or form body has BODY_TIMEOUT_MS to arrive. Node alone waits 5 minutes for it, and the body
// budget (the bodies received at once, per address and in all) then stayed spent as long: a client with
// a few addresses sending half a body and stalling kept everyone's bodies out. Past the deadline the
// request is answered 408 in the envelope, its connection closed, its place in the budget given back.
import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BODIES_PER_CLIENT } from '../../src/http/body-budget';
import { OpenApiChecker, publishedDocument } from '../helpers/openapi';
import {
  demoBootstrap,
  REQUEST_HANG_MS,
  startTestService,
  type TestService,
  withinHang,
} from '../helpers/service';

const LIMIT = 2048;
const TOKEN = 'couvert_pk_deadline_writer_00000000000000001';

interface Answer {
  status: number;
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: the envelope, read as JSON
  body: any;
}

/**
 * Sends `head` and half of a body of `length` bytes, then nothing: the answer the server gives, read
 * until it closes the connection (so a connection left open fails the test at the hang bound).
 */
function halfBody(port: number, head: string, length: number): Promise<Answer> {
  return withinHang(
    new Promise<Answer>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const [top = '', payload = ''] = text.split('\r\n\r\n');
        const [statusLine = '', ...lines] = top.split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) {
          const at = line.indexOf(':');
          headers[line.slice(0, at).toLowerCase()] = line.slice(at + 1).trim();
        }
        let body: unknown = null;
        try {
          body = JSON.parse(payload);
        } catch {
          body = payload;
        }
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
      });
      socket.write(`${head}Content-Length: ${length}\r\n\r\n${'{"a":"'.padEnd(Math.floor(length / 2), 'x')}`);
    }),
    'a half body',
  );
}

const t = suite<{ svc: TestService; port: number }>('body deadline');

t.before(async (ctx) => {
  ctx.svc = await startTestService({
    env: { BODY_LIMIT_BYTES: String(LIMIT), BODY_TIMEOUT_MS: '300' },
    bootstrap: demoBootstrap({}, [
      { id: 'key_deadline', token: TOKEN, scopes: ['CUSTOMERS_WRITE', 'CUSTOMERS_READ'] },
    ]),
  });
  ctx.port = Number(new URL(ctx.svc.url).port);
});
t.after(async (ctx) => {
  await ctx.svc.close();
});

t(
  'a partner body that stops halfway is answered 408 in the envelope, and its connection closed',
  async (ctx) => {
    const answer = await halfBody(
      ctx.port,
      `POST /api/partner/v1/customers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n`,
      200,
    );
    assert.is(answer.status, 408);
    assert.is(answer.body.error.code, 'VALIDATION_ERROR');
    assert.match(answer.body.error.message, 'did not arrive within 300 ms');
    assert.ok(answer.body.error.request_id, 'the envelope carries the request id');
    assert.is(answer.headers.connection, 'close');
    // As the served document says: status, headers, body.
    new OpenApiChecker(await publishedDocument(ctx.svc.rt)).check('POST', '/api/partner/v1/customers', {
      status: answer.status,
      headers: new Headers(answer.headers),
      body: answer.body,
      text: JSON.stringify(answer.body),
    });
  },
);

t(
  'the OAuth token endpoint answers a late body 408 in its own format, and closes the connection',
  async (ctx) => {
    const answer = await halfBody(
      ctx.port,
      'POST /api/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n',
      200,
    );
    assert.is(answer.status, 408);
    assert.is(answer.body.error, 'invalid_request');
    assert.match(answer.body.error_description, 'did not arrive within 300 ms');
    assert.is(answer.headers.connection, 'close');
  },
);

t(
  'late bodies give their place back: past as many as one address may send at once, a body is read',
  async (ctx) => {
    const signIn = 'POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n';
    // Each as large as a body may be: together they hold all this address may be receiving at once.
    const late = await Promise.all(
      Array.from({ length: BODIES_PER_CLIENT }, () => halfBody(ctx.port, signIn, LIMIT)),
    );
    for (const answer of late) assert.is(answer.status, 408);
    const res = await fetch(`http://127.0.0.1:${ctx.port}/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf_token=x&email=a%40b.example&password=not-the-password',
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_HANG_MS),
    });
    assert.is(res.status, 403, 'read and answered: the form had no valid CSRF token');
  },
);

t(
  'a body sent to a route that takes none, stopping halfway, is answered and its connection closed at the deadline',
  async (ctx) => {
    // GET /me takes no body: what arrives is read and dropped, up to the deadline (else Node's 5 minutes).
    const answer = await halfBody(
      ctx.port,
      `GET /api/partner/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n`,
      200,
    );
    assert.is(answer.status, 200);
    assert.is(answer.headers.connection, 'close');
  },
);

t.run();
