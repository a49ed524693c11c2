// Writes that succeed are checked as a partner reads them (test/helpers/write-fuzz.ts): seeded, bounded
// runs from valid bodies changed one field at a time; every answer held to the OpenAPI document.
// FUZZ_SEED and WRITE_FUZZ_STEPS replay or lengthen a run.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/http/routes/index';
import { MANAGER, managerSession } from '../helpers/fuzz-service';
import { TEMPLATES } from '../helpers/missed-calls';
import {
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import { publisherQuiet, type Receiver, startReceiver } from '../helpers/webhook-receiver';
import { CUSTOMER_FIELDS, pairsChecked, runWriteFuzz, stepsFor } from '../helpers/write-fuzz';

const SEED = Number(process.env.FUZZ_SEED ?? 20261128);
const STEPS = Number(process.env.WRITE_FUZZ_STEPS ?? 200);

/** The restaurant's manager, whose dashboard pages are read once the writes are done. */
function withManager(bootstrap: ReturnType<typeof reservationBootstrap>) {
  return {
    ...bootstrap,
    users: [{ ...MANAGER, restaurants: [{ id: 'rest_demo', manage_integrations: true }] }],
  };
}

const t = suite<{ svc: ReservationService; rx: Receiver }>('fuzz writes', {} as never);
t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  ctx.svc = await startReservationService({
    bootstrap: withManager(
      reservationBootstrap({
        customer_fields: CUSTOMER_FIELDS,
        features: ['MISSED_CALLS'],
        message_templates: TEMPLATES,
        booking_url: 'https://le-demo.example/book',
      }),
    ),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ROLES: 'api,projector,webhooks' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

t(`${STEPS} writes from valid bodies: each read back, listed and synced as answered`, async ({ svc, rx }) => {
  // A partner's endpoint for every event: what it ends up believing is checked last.
  const all = await svc.api('POST', '/webhook-endpoints', {
    token: TOKENS.full,
    body: { url: rx.url('/all'), enabled_events: ['*'] },
  });
  assert.is(all.status, 201, all.text);
  const session = await managerSession(svc);
  const report = await runWriteFuzz(svc, {
    token: TOKENS.full,
    routes: allRoutes(svc.rt),
    receiverUrl: rx.url('').replace(/\/$/, ''),
    steps: stepsFor(STEPS, SEED),
    watched: [all.body.data.id],
    page: async (path) => {
      const res = await fetch(`${svc.url}${path}`, {
        headers: { cookie: session.cookie },
        redirect: 'manual',
      });
      return { status: res.status, text: await res.text() };
    },
    delivered: async () => {
      await publisherQuiet(svc.rt, svc.webhooks);
      return rx.for('/all').map((r) => r.json);
    },
  });
  const summary = `succeeded ${JSON.stringify(report.succeeded)} refused ${JSON.stringify(report.refused)}`;
  assert.is(
    report.failures.length,
    0,
    `seed ${SEED}, ${summary}\n${report.failures.slice(0, 12).join('\n')}`,
  );
  // Most writes went through: the checks behind a 2xx were reached for every write route.
  for (const op of [
    'createReservation',
    'patchReservation',
    'createCustomer',
    'patchCustomer',
    'reportMissedCall',
    'createEndpoint',
    'patchEndpoint',
  ])
    assert.ok((report.succeeded[op] ?? 0) >= 5, `${op}: ${summary}`);
  assert.ok((report.events ?? 0) > 50, `${report.events} events delivered`);
  assert.ok(pairsChecked > 10, `${pairsChecked} pairs of events compared`);
});

t.run();
