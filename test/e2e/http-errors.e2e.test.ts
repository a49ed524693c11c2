// The envelope for every failure the HTTP layer itself produces, checked through the real Koa stack
// with two extra routes (one that echoes a validated body, one that throws).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { applyBootstrap } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { defineRoute, PUBLIC, scopes } from '../../src/http/route';
import { partnerRoutes } from '../../src/http/routes/index';
import { arr, int, obj, optional, str } from '../../src/http/schema';
import { createApp } from '../../src/http/server';
import { createRuntime, type Runtime } from '../../src/runtime';
import { captureLog } from '../helpers/log-sink';
import { demoBootstrap, REQUEST_HANG_MS } from '../helpers/service';

const TOKEN = 'couvert_pk_errors_000000000000000000000000001';

const echo = defineRoute({
  method: 'POST',
  path: '/__echo',
  operationId: 'echo',
  summary: 'echo',
  tag: 'Test',
  access: scopes('CATALOG_READ'),
  body: obj({ name: str({ min: 1, max: 5 }), n: optional(int({ min: 1 })), tags: optional(arr(str())) }),
  bodyRequired: true,
  responses: { 200: { description: 'echo' } },
  handler: ({ body }) => ({ body: { data: body } }),
});
const boom = defineRoute({
  method: 'GET',
  path: '/__boom',
  operationId: 'boom',
  summary: 'boom',
  tag: 'Test',
  access: PUBLIC,
  responses: { 200: { description: 'never' } },
  handler: () => {
    throw new Error('secret internal detail');
  },
});
const needsWrite = defineRoute({
  method: 'GET',
  path: '/__needs-write',
  operationId: 'needsWrite',
  summary: 'needs a scope the key lacks',
  tag: 'Test',
  access: scopes('CATALOG_READ', 'RESERVATIONS_WRITE'),
  responses: { 200: { description: 'never' } },
  handler: () => ({ body: {} }),
});

interface Ctx {
  rt: Runtime;
  server: Server;
  base: string;
  logs: string[];
}
const t = suite<Ctx>('http errors');

t.before(async (ctx) => {
  const log = captureLog();
  ctx.logs = log.lines;
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'info',
    BODY_LIMIT_BYTES: '2048',
    RATE_LIMIT_PER_MINUTE: '1000',
  });
  ctx.rt = await createRuntime(config, {
    events: new MemoryEventStore(),
    logger: log.logger,
  });
  await ctx.rt.settle(
    (
      await applyBootstrap(
        ctx.rt,
        demoBootstrap({}, [{ id: 'k', token: TOKEN, scopes: ['CATALOG_READ'] }]),
        operatorMeta(),
      )
    ).position,
  );
  const app = createApp(ctx.rt, [...partnerRoutes(), echo, boom, needsWrite]);
  ctx.server = app.listen(0, '127.0.0.1');
  await new Promise((r) => ctx.server.once('listening', r));
  ctx.base = `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}/api/partner/v1`;
});
t.after(async (ctx) => {
  await new Promise((r) => ctx.server.close(r));
  await ctx.rt.close();
});

// biome-ignore lint/suspicious/noExplicitAny: test reads arbitrary JSON
const json = async (res: Response): Promise<any> => res.json();

const post = (
  ctx: Ctx,
  body: string | undefined,
  headers: Record<string, string> = { 'content-type': 'application/json' },
) =>
  fetch(`${ctx.base}/__echo`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, ...headers },
    body,
  });

t('a valid body passes', async (ctx) => {
  const res = await post(ctx, JSON.stringify({ name: 'ok', n: 2 }));
  assert.is(res.status, 200);
  assert.equal(await json(res), { data: { name: 'ok', n: 2 } });
});

t('invalid JSON is 400 VALIDATION_ERROR', async (ctx) => {
  const res = await post(ctx, '{"name": ');
  assert.is(res.status, 400);
  const body = await json(res);
  assert.is(body.error.code, 'VALIDATION_ERROR');
  assert.is(body.error.details.issues[0].code, 'invalid_json');
  assert.ok(body.error.request_id);
});

t('the caller is checked before the body is read: no token and invalid JSON is 401', async (ctx) => {
  const res = await fetch(`${ctx.base}/__echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"name": ',
  });
  assert.is(res.status, 401);
  assert.is((await json(res)).error.code, 'AUTHENTICATION_REQUIRED');
});

t('every faulty field is listed with path, code and message', async (ctx) => {
  const res = await post(ctx, JSON.stringify({ name: 'toolong', n: 0, tags: ['a', 3], extra: true }));
  assert.is(res.status, 400);
  const issues = (await json(res)).error.details.issues as { path: string; code: string; message: string }[];
  assert.equal(issues.map((i) => `${i.path}:${i.code}`).sort(), [
    'extra:unknown_property',
    'n:out_of_range',
    'name:out_of_range',
    'tags.1:invalid_type',
  ]);
  for (const i of issues) assert.type(i.message, 'string');
});

t('a body over the limit is 413', async (ctx) => {
  const res = await post(ctx, JSON.stringify({ name: 'x'.repeat(5000) }));
  assert.is(res.status, 413);
  assert.is((await json(res)).error.code, 'VALIDATION_ERROR');
});

t('a body that is not JSON is 415, a missing required body 400', async (ctx) => {
  const res = await post(ctx, 'name=x', { 'content-type': 'text/plain' });
  assert.is(res.status, 415);
  assert.is((await json(res)).error.code, 'VALIDATION_ERROR');
  const none = await post(ctx, undefined, {});
  assert.is(none.status, 400);
});

t(
  'a compressed body: gzip, deflate and br in any case are read; another coding is 415 naming those, a body not compressed as said 400, and the limit counts decompressed bytes',
  async (ctx) => {
    const text = JSON.stringify({ name: 'ok', n: 2 });
    const send = (body: string | Buffer, encoding: string) =>
      post(ctx, body as string, { 'content-type': 'application/json', 'content-encoding': encoding });
    for (const [encoding, body] of [
      ['gzip', gzipSync(text)],
      ['GZIP', gzipSync(text)],
      [' Deflate', deflateSync(text)],
      ['br', brotliCompressSync(text)],
      ['identity', text],
    ] as const) {
      const res = await send(body, encoding);
      assert.is(res.status, 200, `${encoding}: ${await res.clone().text()}`);
      assert.equal(await json(res), { data: { name: 'ok', n: 2 } });
    }
    const zstd = await send(text, 'zstd');
    assert.is(zstd.status, 415);
    const refused = await json(zstd);
    assert.is(refused.error.code, 'VALIDATION_ERROR');
    assert.match(
      refused.error.message,
      /Content-Encoding "zstd".*uncompressed, or compressed with gzip, deflate or br/,
    );
    for (const encoding of ['gzip', 'br']) {
      const plain = await send(text, encoding);
      assert.is(plain.status, 400, encoding);
      const body = await json(plain);
      assert.is(body.error.details.issues[0].code, 'invalid_content_encoding', encoding);
      assert.match(body.error.message, new RegExp(`Content-Encoding \\(${encoding}\\)`));
    }
    // 2,048 bytes once decompressed: a small gzip of a large body is still too large.
    const bomb = gzipSync(JSON.stringify({ name: 'x'.repeat(50_000) }));
    assert.ok(bomb.length < 2048);
    const large = await send(bomb, 'gzip');
    assert.is(large.status, 413);
  },
);

t('an unexpected exception is 500 INTERNAL_ERROR with no internals', async (ctx) => {
  const res = await fetch(`${ctx.base}/__boom`);
  assert.is(res.status, 500);
  const text = await res.text();
  assert.not.match(text, /secret internal detail|at .*\.ts/);
  const body = JSON.parse(text);
  assert.is(body.error.code, 'INTERNAL_ERROR');
  assert.is(res.headers.get('x-request-id'), body.error.request_id);
});

t('a missing scope is 403 INSUFFICIENT_SCOPE naming it', async (ctx) => {
  const res = await fetch(`${ctx.base}/__needs-write`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.is(res.status, 403);
  const body = await json(res);
  assert.is(body.error.code, 'INSUFFICIENT_SCOPE');
  assert.equal(body.error.details.missing_scopes, ['RESERVATIONS_WRITE']);
  // The request cannot fix it; the message says what can: a key or an authorization holding the scope.
  assert.is(
    body.error.message,
    'This operation needs the scope(s) RESERVATIONS_WRITE: ask the restaurant for an API key that holds them, or ask for them in the OAuth authorization (scope=)',
  );
});

t(
  'the access log has request id, restaurant, route, status and duration, and never the token',
  async (ctx) => {
    const res = await fetch(`${ctx.base}/me`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'log-check-0001' },
    });
    assert.is(res.status, 200);
    await new Promise((r) => setTimeout(r, 50));
    const line = ctx.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === 'log-check-0001' && l.msg === 'access');
    assert.ok(line, 'access line written');
    assert.is(line.restaurant_id, 'rest_demo');
    assert.is(line.route, '/api/partner/v1/me');
    assert.is(line.status, 200);
    assert.type(line.duration_ms, 'number');
    const all = ctx.logs.join('\n');
    assert.not.ok(all.includes(TOKEN), 'no token in logs');
    assert.not.ok(all.toLowerCase().includes('bearer'), 'no Authorization header in logs');
  },
);

t('a path no route takes is logged without its tokens, addresses or numbers (nor its query)', async (ctx) => {
  const origin = ctx.base.replace(/\/api\/partner\/v1$/, '');
  const cases: [string, string][] = [
    [`/api/oauth/token/${TOKEN}?client_secret=couvert_cs_hidden`, '/api/oauth/token/{…}'],
    ['/api/partner/v1/customers/by-phone/+33612345678', '/api/partner/v1/customers/by-phone/{…}'],
    ['/api/partner/v1/customer/jean.dupont@example.com', '/api/partner/v1/customer/{…}'],
    ['/api/partner/v1/missed-call/0612345678', '/api/partner/v1/missed-call/{…}'],
    ['/api/partner/v1/nope/cus_12ab', '/api/partner/v1/nope/cus_12ab'],
    // A webhook signing secret pasted into a path (it starts with a letter, as ids do).
    ['/api/partner/v1/webhook-endpoint/whsec_Ab12Cd34Ef56Gh78Ij90', '/api/partner/v1/webhook-endpoint/{…}'],
  ];
  for (const [i, [path, logged]] of cases.entries()) {
    const id = `path-log-000${i}`;
    const res = await fetch(`${origin}${path}`, { headers: { 'x-request-id': id } });
    assert.is(res.status, 404, path);
    await res.arrayBuffer();
    let line: { route?: string } | undefined;
    for (const end = Date.now() + REQUEST_HANG_MS; !line && Date.now() < end; ) {
      line = ctx.logs.map((l) => JSON.parse(l)).find((l) => l.request_id === id && l.msg === 'access');
      if (!line) await new Promise((r) => setTimeout(r, 20));
    }
    assert.is(line?.route, logged, path);
  }
  const all = ctx.logs.join('\n');
  for (const secret of [
    TOKEN,
    'whsec_Ab12Cd34Ef56Gh78Ij90',
    'couvert_cs_hidden',
    '33612345678',
    'jean.dupont',
    '0612345678',
  ])
    assert.not.ok(all.includes(secret), `${secret} in the logs`);
});

t.run();
