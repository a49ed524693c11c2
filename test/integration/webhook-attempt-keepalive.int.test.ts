// A delivery attempt sent on a kept-alive connection the endpoint has just closed (its idle timeout met
// the attempt: the endpoint never read the request) is made again at once on a new connection, not
// recorded as a network failure and left to a retry 5 s later (on a frozen clock: never; this is what
// made the webhooks e2e suite wait in vain on a loaded machine). The endpoint here answers the first
// request of each connection and drops the connection when a second one arrives on it, so every
// attempt after the first meets that race, every time.
import { getEventListeners } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sendAttempt } from '../../src/webhooks/deliver';

const t = suite('webhook attempt on a closed keep-alive connection');

t('an attempt whose reused connection is reset before any answer is made again on a new one', async () => {
  const sockets: Socket[] = [];
  let requests = 0;
  let dropped = 0;
  const server = createServer((socket) => {
    sockets.push(socket);
    let seen = 0;
    let buffered = '';
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      // One request per "\r\n\r\n" + its body (content-length): enough for these small bodies.
      for (;;) {
        const head = buffered.indexOf('\r\n\r\n');
        if (head < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, head))?.[1] ?? 0);
        if (buffered.length < head + 4 + length) return;
        buffered = buffered.slice(head + 4 + length);
        seen++;
        if (seen > 1) {
          // The idle timeout closed it as this request came: never read, never answered.
          dropped++;
          socket.resetAndDestroy();
          return;
        }
        requests++;
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const attempt = (n: number) =>
    sendAttempt({
      url,
      body: JSON.stringify({ n }),
      secrets: ['whsec_keepalive_test_000000000001'],
      timestamp: 1_780_000_000,
      attempt: 1,
      deliveryId: `whd_keepalive_${n}`,
      logId: `whl_keepalive_${n}`,
      eventTime: '2026-06-02T10:00:00.000Z',
      customHeaders: {},
      allowPrivate: true,
    });
  try {
    for (let n = 1; n <= 3; n++) {
      const res = await attempt(n);
      assert.is(res.error, null, `attempt ${n}: ${res.message}`);
      assert.is(res.status, 200, `attempt ${n}`);
    }
    assert.is(requests, 3, 'each attempt answered once');
    assert.ok(dropped >= 1, 'the endpoint did drop a reused connection (the race this covers)');
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

t(
  'a stop during the repeat on a new connection cuts it, and the attempt leaves no listener on the stop signal',
  async () => {
    const sockets: Socket[] = [];
    let hold = false;
    let reachedFresh: (s: Socket) => void = () => {};
    const fresh = new Promise<Socket>((r) => {
      reachedFresh = r;
    });
    const server = createServer((socket) => {
      sockets.push(socket);
      let seen = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        for (;;) {
          const head = buffered.indexOf('\r\n\r\n');
          if (head < 0) return;
          const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, head))?.[1] ?? 0);
          if (buffered.length < head + 4 + length) return;
          buffered = buffered.slice(head + 4 + length);
          seen++;
          if (seen > 1) {
            socket.resetAndDestroy();
            return;
          }
          // The repeat's new connection: never answered, until the stop cuts it.
          if (hold) return reachedFresh(socket);
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const stop = new AbortController();
    const attempt = (n: number) =>
      sendAttempt({
        url,
        body: JSON.stringify({ n }),
        secrets: ['whsec_keepalive_test_000000000001'],
        timestamp: 1_780_000_000,
        attempt: 1,
        deliveryId: `whd_keepalive_stop_${n}`,
        logId: `whl_keepalive_stop_${n}`,
        eventTime: '2026-06-02T10:00:00.000Z',
        customHeaders: {},
        allowPrivate: true,
        signal: stop.signal,
      });
    try {
      const first = await attempt(1);
      assert.is(first.status, 200, `attempt 1: ${first.message}`);
      assert.is(
        getEventListeners(stop.signal, 'abort').length,
        0,
        'an answered attempt takes its listener off',
      );
      hold = true;
      const second = attempt(2);
      const held = await fresh;
      const closed = new Promise<void>((r) => held.once('close', () => r()));
      stop.abort();
      const res = await second;
      assert.is(res.stopped, true, res.message ?? '');
      assert.is(res.status, null);
      await closed; // the repeat's connection is cut, not left waiting for the endpoint
      assert.is(
        getEventListeners(stop.signal, 'abort').length,
        0,
        'a stopped attempt takes its listener off',
      );
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  },
);

t.run();
