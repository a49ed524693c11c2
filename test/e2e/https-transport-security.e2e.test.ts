// A service published at an https BASE_URL tells browsers to come back over https only (HSTS): without
// it, a manager who types the address, or follows an http:// link, reaches the sign-in page over plain
// HTTP first, where an attacker on the network can answer instead (SSL stripping) and read the password.
// The header is sent on every answer (pages, the API, the answers Node's parser refuses), and only for an
// https BASE_URL: over plain http a browser ignores it anyway, and a local server must not pin itself.
import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { type RunningService, startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';

const HSTS = 'strict-transport-security';

interface Ctx {
  secure: RunningService;
  plain: RunningService;
}
const t = suite<Ctx>('https transport security');

const start = (env: Record<string, string>) =>
  startService(loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ROLES: 'api,projector', ...env }), {
    events: new MemoryEventStore(),
    logger: createLogger('silent'),
    demo: false,
  });

/** The server's own address (the BASE_URL of the https one names the public host, not this socket). */
const local = (svc: RunningService) => `http://127.0.0.1:${(svc.server.address() as { port: number }).port}`;

t.before(async (ctx) => {
  ctx.secure = await start({ BASE_URL: 'https://couvert.example.test' });
  ctx.plain = await start({});
});
t.after(async (ctx) => {
  await ctx.secure.stop();
  await ctx.plain.stop();
});

t('an https BASE_URL sends HSTS on the API, the pages and their errors', async (ctx) => {
  for (const path of ['/api/partner/v1', '/api/partner/v1/me', '/sign-in', '/dashboard', '/no-such-page']) {
    const res = await fetch(`${local(ctx.secure)}${path}`, { redirect: 'manual' });
    assert.is(res.headers.get(HSTS), 'max-age=31536000', `${path} (${res.status})`);
  }
});

t('an answer Node refuses to parse carries it too', async (ctx) => {
  const port = (ctx.secure.server.address() as { port: number }).port;
  const head = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(data.split('\r\n\r\n')[0] ?? ''));
    socket.write('GET /api/partner/v1 HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
  });
  assert.match(head, /^HTTP\/1\.1 400 /);
  assert.match(head.toLowerCase(), /\r\nstrict-transport-security: max-age=31536000\r\n/);
});

t('an http BASE_URL sends no HSTS', async (ctx) => {
  for (const path of ['/api/partner/v1', '/sign-in']) {
    const res = await fetch(`${local(ctx.plain)}${path}`, { redirect: 'manual' });
    assert.is(res.headers.get(HSTS), null, path);
  }
});

t('openapi.json documents the header on every answer', async (ctx) => {
  const doc = (await (await fetch(`${local(ctx.secure)}/api/partner/v1/openapi.json`)).json()) as {
    components: { headers: Record<string, { required?: boolean }> };
    paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
  };
  assert.is(doc.components.headers.StrictTransportSecurity?.required, false);
  const me = doc.paths['/api/partner/v1/me']?.get?.responses['200']?.headers as Record<string, unknown>;
  assert.ok(me[HSTS], 'GET /me 200 lists strict-transport-security');
});

t.run();
