// An endpoint that answers (its status line and headers come) and then cuts the connection while the
// body is still coming — a reset after a 400 and part of its body, a body shorter than its
// content-length — has answered: the status line decides (docs/WEBHOOKS.md, Answers), kept with what
// came of the body, marked cut. It was recorded as a network error (status null) and retried for hours,
// a final 4xx included (spec §6: any other 4xx is final and is not retried).
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sendAttempt } from '../../src/webhooks/deliver';
import { classifyAttempt } from '../../src/webhooks/schedule';

const t = suite('webhook attempt: an answer cut while its body comes');

/** A raw endpoint: once the request arrives, `answer` writes what it writes and cuts the connection. */
async function endpoint(answer: (socket: Socket) => void) {
  const server = createServer((socket) => {
    socket.once('data', () => answer(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise((r) => server.close(r)),
  };
}

const attempt = (url: string) =>
  sendAttempt({
    url,
    body: JSON.stringify({ id: 'evt_cut', type: 'customer.created' }),
    secrets: ['whsec_cut_answer_test_0000000001'],
    timestamp: 1_780_000_000,
    attempt: 1,
    deliveryId: 'whd_cut_answer',
    logId: 'whl_cut_answer',
    eventTime: '2026-06-02T10:00:00.000Z',
    customHeaders: {},
    allowPrivate: true,
  });

/** Cuts the connection once what was written has left (a reset: the endpoint's process crashed, a proxy's limit). */
const resetAfter = (socket: Socket, written: string) => socket.write(written, () => socket.resetAndDestroy());

const CASES: { name: string; answer: (s: Socket) => void; status: number; excerpt: string }[] = [
  {
    name: 'a 400 whose chunked body is reset midway',
    answer: (s) =>
      resetAfter(s, 'HTTP/1.1 400 Bad Request\r\ntransfer-encoding: chunked\r\n\r\n9\r\nbad input\r\n'),
    status: 400,
    excerpt: 'bad input',
  },
  {
    name: 'a 410 shorter than its content-length',
    answer: (s) => s.end('HTTP/1.1 410 Gone\r\ncontent-length: 100\r\n\r\ngone'),
    status: 410,
    excerpt: 'gone',
  },
  {
    name: 'a 503 reset midway (retried as any 5xx)',
    answer: (s) =>
      resetAfter(s, 'HTTP/1.1 503 Service Unavailable\r\ntransfer-encoding: chunked\r\n\r\n4\r\nbusy\r\n'),
    status: 503,
    excerpt: 'busy',
  },
];

for (const c of CASES)
  t(`${c.name}: its status decides, with what came of its body`, async () => {
    const ep = await endpoint(c.answer);
    try {
      const r = await attempt(ep.url);
      assert.is(r.status, c.status, JSON.stringify(r));
      assert.is(r.error, null);
      assert.is(r.bodyExcerpt, c.excerpt);
      assert.is(r.excerptTruncated, true, 'marked cut');
      assert.is(classifyAttempt(r), c.status >= 500 ? 'retryable' : 'final');
    } finally {
      await ep.close();
    }
  });

t('no answer at all (reset before the status line) stays a network error, retried', async () => {
  const ep = await endpoint((s) => s.resetAndDestroy());
  try {
    const r = await attempt(ep.url);
    assert.is(r.status, null);
    assert.is(r.error, 'network');
    assert.is(classifyAttempt(r), 'retryable');
  } finally {
    await ep.close();
  }
});

t.run();
