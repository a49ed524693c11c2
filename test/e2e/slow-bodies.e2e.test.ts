// A body is held in memory while it arrives (up to BODY_LIMIT_BYTES), and Node gives a request 5
// minutes to arrive whole. Without a bound, anyone could open connections to a route that reads a body
// without a credential (POST /sign-in, the OAuth token endpoint), send all of a large body but its last
// byte, and keep it there: 200 such connections held 230 MB of the server's memory, and nothing stopped
// a thousand more. The bodies being received at once are bounded per client address (an IPv6 client's
// /64) and in all; past the bound a request is refused (429) before its body is read.
import { connect, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { type RunningService, startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { BODIES_PER_CLIENT } from '../../src/http/body-budget';
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
function stalled(port: number, path: string): Socket {
  const socket = connect(port, '127.0.0.1');
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
