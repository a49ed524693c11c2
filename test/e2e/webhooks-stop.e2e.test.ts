// A graceful stop while a webhook attempt waits for a slow endpoint's answer. The stop used to wait
// for the attempt's 12 s timeout (a background attempt: recorded as a timeout, so the next start sent
// attempt 2 after its retry delay) or, for a test delivery inside a request, past the drain's grace: the
// request was cut without an answer and its record appended to a closed store (lost). Now an attempt
// still waiting a moment after the stop began is cut: a background one is handed back (asked for again
// in the log, same attempt number, made at once by the next start: docs/WEBHOOKS.md, at least once), a
// test delivery is recorded as failed and answered.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { demoBootstrap, orClose, startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_stop_hooks_0000000000000000000001';
const bootstrap = demoBootstrap({}, [
  { id: 'key_s', token: TOKEN, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'WEBHOOKS_WRITE'] },
]);
const env = { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };

/** An endpoint that holds every request without answering while `hanging`, then answers 200. */
async function slowEndpoint() {
  const seen: IncomingMessage[] = [];
  const held: ServerResponse[] = [];
  const waiters = new Set<() => void>();
  let hanging = true;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req);
      for (const w of [...waiters]) w();
      if (hanging) held.push(res);
      else res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    seen,
    answerFromNowOn: () => {
      hanging = false;
    },
    arrived: (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${seen.length} of ${count} requests`)), 120_000);
        const check = () => {
          if (seen.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    close: async () => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function createEndpoint(svc: TestService, url: string): Promise<string> {
  const ep = await svc.api('POST', '/webhook-endpoints', {
    token: TOKEN,
    body: { url, enabled_events: ['customer.created'] },
  });
  assert.is(ep.status, 201, ep.text);
  return ep.body.data.id;
}

test('a stop cuts an attempt waiting for its answer and hands it back: the next start makes the same attempt', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-stop-'));
  const endpoint = await slowEndpoint();
  let svc: TestService | null = await orClose(
    startTestService({ bootstrap, env, dataDir: dir }),
    endpoint.close,
  );
  try {
    const id = await createEndpoint(svc, endpoint.url);
    assert.is(
      (await svc.api('POST', '/customers', { token: TOKEN, body: { name: 'Slow Hook' } })).status,
      201,
    );
    await endpoint.arrived(1);
    await svc.stop();
    svc = null;

    endpoint.answerFromNowOn();
    svc = await startTestService({ bootstrap, env, dataDir: dir });
    await endpoint.arrived(2);
    const [first, again] = endpoint.seen as [IncomingMessage, IncomingMessage];
    assert.is(again.headers['x-service-delivery'], first.headers['x-service-delivery']);
    assert.is(
      again.headers['x-service-attempt'],
      '1',
      'the attempt cut by the stop is made again as attempt 1 (it was not recorded as a timeout)',
    );
    // Its record lands once the endpoint answered: one attempt, succeeded.
    let delivery: { status: string; attempts: { attempt: number; status_code: number | null }[] } | undefined;
    for (let i = 0; i < 4_800; i++) {
      delivery = (await svc.api('GET', `/webhook-endpoints/${id}/deliveries`, { token: TOKEN })).body.data[0];
      if (delivery?.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.is(delivery?.status, 'succeeded');
    assert.equal(
      delivery?.attempts.map((a) => [a.attempt, a.status_code]),
      [[1, 200]],
    );
  } finally {
    await svc?.stop();
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a stop during a test delivery answers the request and records the attempt as failed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-webhooks-stop-'));
  const endpoint = await slowEndpoint();
  let svc: TestService | null = await orClose(
    startTestService({ bootstrap, env, dataDir: dir }),
    endpoint.close,
  );
  try {
    const id = await createEndpoint(svc, endpoint.url);
    const testing = svc.api('POST', `/webhook-endpoints/${id}/test`, { token: TOKEN });
    await endpoint.arrived(1);
    const stopped = svc.stop();
    const answer = await testing;
    await stopped;
    svc = null;
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.body.data.succeeded, false);
    assert.is(answer.body.data.status_code, null);
    assert.is(answer.body.data.error, 'network');
    assert.is(answer.headers.get('connection'), 'close');

    // The attempt is in the history after a restart: nothing was lost with the stop.
    svc = await startTestService({ bootstrap, env, dataDir: dir });
    const history = (await svc.api('GET', `/webhook-endpoints/${id}/deliveries`, { token: TOKEN })).body.data;
    assert.equal(
      history.map((d: { _id: string; id: string; status: string }) => [d.id, d.status]),
      [[answer.body.data.delivery_id, 'failed']],
    );
  } finally {
    await svc?.stop();
    await endpoint.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
