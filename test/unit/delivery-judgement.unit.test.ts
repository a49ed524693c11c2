// The Insights page's judgement of an endpoint's deliveries (src/web/delivery-judgement.ts): a delivery
// still being retried after failed attempts counts as not delivered yet, so an endpoint whose every
// attempt fails is never said to have received its deliveries (it showed "— · 0/0" under "Every
// endpoint received at least 95% of its deliveries").
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { judgeDeliveries } from '../../src/web/delivery-judgement';

const t = suite('insights: an endpoint’s deliveries judged');
const day = (o: Partial<Parameters<typeof judgeDeliveries>[0]>) => ({
  delivered: 0,
  failed: 0,
  pending: 0,
  failed_attempts: 0,
  first_attempt_delivered: 0,
  ...o,
});

t('two deliveries pending after 8 failed attempts, none delivered: 0 of 2, short', () => {
  const j = judgeDeliveries(day({ pending: 2, failed_attempts: 8 }));
  assert.equal(j, { delivered: 0, retrying: 2, judged: 2, rate: 0, short: true });
});

t('a delivery waiting for its first attempt is not judged', () => {
  assert.equal(judgeDeliveries(day({ delivered: 1, first_attempt_delivered: 1, pending: 1 })), {
    delivered: 1,
    retrying: 0,
    judged: 1,
    rate: 1,
    short: false,
  });
});

t('failed attempts of deliveries that failed, or went through on a retry, are theirs', () => {
  const j = judgeDeliveries(
    day({ delivered: 20, first_attempt_delivered: 19, failed: 1, failed_attempts: 4, pending: 3 }),
  );
  assert.is(j.retrying, 2);
  assert.is(j.judged, 23);
});

t(
  'property: every pending delivery with a failed attempt is counted, and never more than are pending',
  () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            state: fc.constantFrom('delivered', 'failed', 'pending', 'canceled'),
            failures: fc.nat(8),
          }),
          { maxLength: 40 },
        ),
        (deliveries) => {
          // A failed delivery failed at least once; one delivered with failures first was not on attempt 1.
          const d = deliveries.map((x) => ({
            ...x,
            failures: x.state === 'failed' ? Math.max(1, x.failures) : x.failures,
          }));
          const count = (s: string) => d.filter((x) => x.state === s).length;
          const j = judgeDeliveries({
            delivered: count('delivered'),
            failed: count('failed'),
            pending: count('pending'),
            failed_attempts: d.reduce((a, x) => a + x.failures, 0),
            first_attempt_delivered: d.filter((x) => x.state === 'delivered' && x.failures === 0).length,
          });
          const retried = d.filter((x) => x.state === 'pending' && x.failures > 0).length;
          assert.ok(j.retrying >= retried, `${j.retrying} < ${retried}`);
          assert.ok(j.retrying <= count('pending'));
          // All delivered or being delivered for the first time: judged well.
          if (
            count('failed') === 0 &&
            retried === 0 &&
            d.every((x) => x.state !== 'canceled' || x.failures === 0) &&
            d.every((x) => x.state !== 'delivered' || x.failures <= 1)
          )
            assert.not.ok(j.short);
          if (retried > 0 && count('delivered') === 0) assert.ok(j.short);
        },
      ),
    );
  },
);

t.run();
