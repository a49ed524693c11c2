// A body is held in memory while it arrives (up to BODY_LIMIT_BYTES), and Node gives a request 5
// minutes to arrive whole. Without a bound, anyone could open connections to a route that reads a body
// without a credential (POST /sign-in, the OAuth token endpoint), send all of a large body but its last
// byte, and keep it there: 200 such connections held 230 MB of the server's memory, and nothing stopped
// a thousand more. The bytes of bodies that have arrived and are not yet read are bounded per client
// address (an IPv6 client's /56; past it 429) and in all (a memory safeguard; past it 503). Only bytes
// that arrived count: a request that declares a body and sends none holds nothing.
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { type RunningService, startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { BODIES_IN_ALL, BODIES_PER_CLIENT } from '../../src/http/body-budget';
import { createLogger } from '../../src/logger';
import { REQUEST_HANG_MS } from '../helpers/service';

const LIMIT = 2048;

interface Ctx {
  svc: RunningService;
  port: number;
  held: Socket[];
}
const t = suite<Ctx>('slow bodies');

t.before(async (ctx) => {
  ctx.svc = await startService(
    loadConfig({ PORT: '0', LOG_LEVEL: 'silent', ROLES: 'api,projector', BODY_LIMIT_BYTES: String(LIMIT) }),
    { events: new MemoryEventStore(), logger: createLogger('silent'), demo: false },
  );
  ctx.port = Number(new URL(ctx.svc.url).port);
  ctx.held = [];
});
t.after(async (ctx) => {
  for (const s of ctx.held) s.destroy();
  await ctx.svc.stop();
});

/** A POST whose body stops one byte short of its Content-Length, left open. */
function stalled(port: number, path: string, localAddress = '127.0.0.1'): Socket {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${LIMIT}\r\n\r\n${'a'.repeat(LIMIT - 1)}`,
  );
  return socket;
}

/** A whole sign-in form (its CSRF token is wrong: read, it is answered 403). */
const signIn = (port: number) =>
  fetch(`http://127.0.0.1:${port}/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'csrf_token=x&email=a%40b.example&password=not-the-password',
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_HANG_MS),
  });

t(
  'requests that declare a body and send none, from 16 addresses, keep out no body of another client',
  async (ctx) => {
    // Each declares a body of the largest size and sends only its headers: counted by what they declared,
    // 16 per address filled the bound of every client together, and any other body was refused 429.
    let received = 0;
    const allReceived = new Promise<void>((resolve) => {
      const onRequest = () => {
        if (++received < 16 * BODIES_PER_CLIENT) return;
        ctx.svc.server.off('request', onRequest);
        resolve();
      };
      ctx.svc.server.on('request', onRequest);
    });
    const headersOnly: Socket[] = [];
    for (let a = 2; a < 18; a++)
      for (let i = 0; i < BODIES_PER_CLIENT; i++) {
        const socket = connect({ port: ctx.port, host: '127.0.0.1', localAddress: `127.0.0.${a}` });
        socket.on('error', () => {});
        socket.write(
          `POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${LIMIT}\r\n\r\n`,
        );
        headersOnly.push(socket);
      }
    try {
      await allReceived;
      const res = await signIn(ctx.port);
      assert.is(res.status, 403, 'read and answered: the form had no valid CSRF token');
    } finally {
      for (const s of headersOnly) s.destroy();
    }
  },
);

/** The status line and headers answering a whole sign-in form sent from `localAddress` (its CSRF token is wrong). */
function signInFrom(port: number, localAddress: string, padding = 0): Promise<string> {
  const body = `csrf_token=x&email=a%40b.example&password=not-the-password${'p'.repeat(padding)}`;
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const timer = setTimeout(() => socket.destroy(new Error('no answer')), REQUEST_HANG_MS);
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (!text.includes('\r\n\r\n')) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(text.slice(0, text.indexOf('\r\n\r\n')));
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(
      `POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
  });
}

const statusOf = (head: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);

t(
  'bodies really arriving from everyone, up to the safeguard in memory: the next is refused 503',
  async (ctx) => {
    // 16 addresses each holding just under its own bound: almost all the safeguard's bytes are held.
    const held: Socket[] = [];
    try {
      for (let a = 20; a < 36; a++)
        for (let i = 0; i < BODIES_PER_CLIENT; i++) held.push(stalled(ctx.port, '/sign-in', `127.0.0.${a}`));
      const padding = (BODIES_IN_ALL - 16 * BODIES_PER_CLIENT) * LIMIT + 16 * BODIES_PER_CLIENT + 1;
      // The held bodies reach the server in their own time: asked again until they have (a hang bound).
      let head = await signInFrom(ctx.port, '127.0.0.36', padding);
      for (const end = Date.now() + REQUEST_HANG_MS; statusOf(head) !== 503 && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 50));
        head = await signInFrom(ctx.port, '127.0.0.36', padding);
      }
      assert.is(statusOf(head), 503, 'refused: the server holds what it keeps of bodies');
      assert.match(head, /\r\nretry-after: 5\r\n/i);
    } finally {
      for (const s of held) s.destroy();
    }
  },
);

t('a compressed body counts what it decodes to, not the few bytes sent', async (ctx) => {
  // A limit's worth of text in a few dozen gzip bytes, all but the trailer sent: the parser holds the
  // decoded text while it waits for the rest.
  const gz = gzipSync('a'.repeat(LIMIT - 1));
  const from = '127.0.0.18';
  const held: Socket[] = [];
  try {
    for (let i = 0; i < BODIES_PER_CLIENT; i++) {
      const socket = connect({ port: ctx.port, host: '127.0.0.1', localAddress: from });
      socket.on('error', () => {});
      socket.write(
        `POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`,
      );
      socket.write(gz.subarray(0, gz.length - 8));
      held.push(socket);
    }
    // The held bodies reach the server in their own time: asked again until they have (a hang bound).
    let status = statusOf(await signInFrom(ctx.port, from));
    for (const end = Date.now() + REQUEST_HANG_MS; status !== 429 && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 20));
      status = statusOf(await signInFrom(ctx.port, from));
    }
    assert.is(status, 429, 'refused while the decoded bodies are held');
    assert.is(statusOf(await signInFrom(ctx.port, '127.0.0.19')), 403, 'another address is read');
  } finally {
    for (const s of held) s.destroy();
  }
});

t('past the bodies one client may be sending at once, the next is refused before it is read', async (ctx) => {
  for (let i = 0; i < BODIES_PER_CLIENT; i++) ctx.held.push(stalled(ctx.port, '/sign-in'));
  // The held requests reach the server in their own time: asked again until they have (a hang bound).
  let res = await signIn(ctx.port);
  for (const end = Date.now() + REQUEST_HANG_MS; res.status !== 429 && Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 20));
    res = await signIn(ctx.port);
  }
  assert.is(res.status, 429, 'refused while the others are held');
  assert.ok(Number(res.headers.get('retry-after')) >= 1, 'says when to retry');
  // Once one held body goes, a body is read again.
  (ctx.held.pop() as Socket).destroy();
  let after = await signIn(ctx.port);
  for (const end = Date.now() + REQUEST_HANG_MS; after.status === 429 && Date.now() < end; ) {
    await new Promise((r) => setTimeout(r, 20));
    after = await signIn(ctx.port);
  }
  assert.is(after.status, 403, 'read and answered: the form had no valid CSRF token');
});

t.run();
