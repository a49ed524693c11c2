// Every webhook attempt in flight listens to the service's stop (the publisher's stop signal, made from
// rt.stopping), and so does every WhatsApp send (rt.stopping itself), each taking its listener off when
// it ends. Found by the soak (bench/soak.ts): with more than ten in flight at once (a slow endpoint, a
// few endpoints, concurrency 8 each) Node printed "MaxListenersExceededWarning: Possible EventTarget
// memory leak detected" on the service's stderr under ordinary load, a false alarm an operator reads
// as a leak. Those signals take any number of listeners; whether they are taken off is the attempts' rule.
import { getEventListeners } from 'node:events';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hold, publisherQuiet } from '../helpers/webhook-receiver';
import { demoCustomer, startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

const IN_FLIGHT = 14;

const t = suite<{ w: WebhooksWorld; warnings: string[]; onWarning: (w: Error) => void }>(
  'webhooks: attempts in flight and the stop signal',
);

t.before(async (ctx) => {
  ctx.warnings = [];
  ctx.onWarning = (w: Error) => {
    if (w.name === 'MaxListenersExceededWarning') ctx.warnings.push(w.message);
  };
  process.on('warning', ctx.onWarning);
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-stop-listeners',
    key: { id: 'key_sl', token: 'couvert_pk_stoplisteners_0000000000000001', scopes: ['CUSTOMERS_READ'] },
    endpoint: { id: 'we_sl', path: '/held', secret: 'whsec_stop_listeners_secret_00001' },
    publisher: { concurrencyPerEndpoint: IN_FLIGHT, timeoutMs: 600_000 },
  });
});

t.after(async (ctx) => {
  process.off('warning', ctx.onWarning);
  await ctx.w?.close();
});

t('more than ten attempts waiting for their answers: no listener warning', async ({ w, warnings }) => {
  const gate = hold();
  w.rx.on('/held', { until: gate.held });
  try {
    for (let i = 0; i < IN_FLIGHT; i++) await demoCustomer(w.rt, `Held ${i}`);
    await w.rx.waitFor('/held', IN_FLIGHT);
    // A warning is emitted on a later tick than the listener that passed the bound.
    await new Promise((r) => setImmediate(r));
    assert.equal(warnings, []);
  } finally {
    gate.release();
  }
  // Without a bound, Node no longer warns of a leak: every attempt's listener must be gone once it ends.
  const running = w.running;
  assert.ok(running);
  await publisherQuiet(w.rt, running);
  const publisherSignal = (running.publisher as unknown as { stopSignal: AbortSignal }).stopSignal;
  assert.ok(publisherSignal instanceof AbortSignal);
  assert.equal(getEventListeners(publisherSignal, 'abort').length, 0, 'the publisher stop signal');
  assert.equal(getEventListeners(w.rt.stopping.signal, 'abort').length, 0, 'the service stop signal');
});

t('the service stop signal takes as many listeners as sends in flight', async ({ w, warnings }) => {
  warnings.length = 0;
  const listeners = Array.from({ length: IN_FLIGHT }, () => () => {});
  for (const l of listeners) w.rt.stopping.signal.addEventListener('abort', l, { once: true });
  await new Promise((r) => setImmediate(r));
  for (const l of listeners) w.rt.stopping.signal.removeEventListener('abort', l);
  assert.equal(warnings, []);
  assert.equal(getEventListeners(w.rt.stopping.signal, 'abort').length, 0);
});

t.run();
