// No input answers 5xx or drops the connection (issue 11 point 5): a seeded, bounded fuzz run over
// every declared route (test/helpers/fuzz.ts), then the service must still answer correctly.
// `npm run fuzz` runs the same fuzzer for as long as asked.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertStillServing, fuzzService, startFuzzTarget } from '../helpers/fuzz-service';
import type { ReservationService } from '../helpers/reservations';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 2_000);

const t = suite<{ svc: ReservationService }>('fuzz', {} as { svc: ReservationService });
t.before(async (ctx) => {
  ctx.svc = await startFuzzTarget();
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

t(
  `${REQUESTS} generated requests: no 5xx, no dropped connection, the envelope on every error`,
  async ({ svc }) => {
    const report = await fuzzService(svc, REQUESTS, SEED);
    assert.is(report.sent, REQUESTS);
    const shown = report.failures
      .slice(0, 10)
      .map((f) => `- ${f.why}\n  ${f.request}`)
      .join('\n');
    assert.is(report.failed, 0, `seed ${SEED}: ${report.failed} of ${report.sent} failed\n${shown}`);
    // The run reached the routes, not only the error paths.
    assert.ok((report.statuses[200] ?? 0) + (report.statuses[201] ?? 0) > 0, JSON.stringify(report.statuses));
    assert.ok((report.statuses[400] ?? 0) > 0);
    // The pages were reached as the signed-in manager, not only their sign-in redirect.
    assert.ok(report.signedPast > 50, `${report.signedPast} signed page requests got past sign-in`);
  },
);

t('afterwards: nothing polluted, and a create/read round trip still works', async ({ svc }) => {
  await assertStillServing(svc);
});

t.run();
