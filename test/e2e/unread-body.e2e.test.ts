// A body sent to a route that takes none is read and dropped before the answer: left unread, closing
// the connection reset it and cut a large answer short (GET /openapi.json is 150 KB and more).
import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('a body sent to a route without one');
t.before(async (ctx) => {
  ctx.svc = await startTestService();
});
t.after(async ({ svc }) => svc.close());

function raw(svc: TestService, body: string): Promise<{ status: string; bytes: number; length: number }> {
  const port = Number(new URL(svc.url).port);
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => reject(new Error('no answer in 10 s')), 10_000);
    s.on('data', (c) => chunks.push(c));
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      const data = Buffer.concat(chunks);
      const head = data.subarray(0, data.indexOf('\r\n\r\n')).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1);
      resolve({ status: head.split('\r\n')[0] ?? '', bytes: data.length - head.length - 4, length });
    });
    s.on('connect', () =>
      s.write(
        `GET /api/partner/v1/openapi.json HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    );
  });
}

t('GET /openapi.json with a 300 KB body answers the whole document', async ({ svc }) => {
  for (const size of [10, 300_000]) {
    const r = await raw(svc, '['.repeat(size));
    assert.is(r.status, 'HTTP/1.1 200 OK', `${size}`);
    assert.ok(r.length > 100_000);
    assert.is(r.bytes, r.length, `${size}: the whole answer arrived`);
  }
});

t.run();
