// `audit verify` against a live store the service has kept running: the hourly job prunes finished
// webhook deliveries older than 30 days from the read model (src/webhooks-module.ts), which a replay
// of the whole log still builds. Those are retention, not a difference: verify compares the window
// the service keeps, and still reports a delivery of that window that is missing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES } from '../../projections/webhook-deliveries';
import { FixedClock } from '../../src/core/clock';
import { seedInsightsDemo } from '../../src/insights-demo';
import { pruneDeliveries } from '../../src/webhooks-module';
import { runCli as cli, printedBy } from '../helpers/cli-in-process';
import { INSIGHTS_NOW, INSIGHTS_SEED } from '../helpers/insights';
import { oauthBootstrap } from '../helpers/oauth';
import { startTestService } from '../helpers/service';

const t = suite('audit verify: delivery history past its retention');

t('pruned deliveries are not differences; a delivery missing from the kept window is', async () => {
  const clock = new FixedClock(INSIGHTS_NOW);
  const svc = await startTestService({ bootstrap: oauthBootstrap(), clock });
  try {
    await svc.rt.settle(await seedInsightsDemo(svc.rt, 'rest_demo', INSIGHTS_SEED));
    clock.advance(15 * 86_400);
    assert.match(String(await pruneDeliveries(svc.rt)), /^pruned \d+ webhook deliveries/);
    const ok = await cli(svc, 'audit verify', { 'no-progress': true, 'no-chain': true });
    assert.match(ok.join('\n'), /; 0 difference\(s\)/);

    // The raw store, under the name the served version writes (webhook_deliveries_v3).
    const served = svc.rt.versions.aliased.resolve(WEBHOOK_DELIVERIES);
    assert.is(served, `${WEBHOOK_DELIVERIES}_v3`);
    const kept = svc.rt.projections.docs.collection(served);
    const [one] = await kept.find({}, { limit: 1 });
    assert.ok(one);
    await kept.deleteOne({ _id: one._id });
    const failed = await cli(svc, 'audit verify', { 'no-progress': true, 'no-chain': true }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.match(String(failed), /found 1 problem/);
    assert.ok(printedBy(failed).some((l) => l.includes(`missing_in_live: ${served}/${one._id}`)));
    // --json: one line, snake_case keys (docs/AUDIT.md).
    const asJson = await cli(svc, 'audit verify', { 'no-progress': true, 'no-chain': true, json: true }).then(
      () => null,
      (err: unknown) => err,
    );
    const report = JSON.parse(printedBy(asJson)[0] as string);
    assert.equal(Object.keys(report), ['problems', 'chain', 'erasure', 'read_models']);
    assert.is(report.problems, 1);
    assert.is(report.chain, null);
    assert.equal(report.read_models.differences, [
      { collection: served, _id: one._id, kind: 'missing_in_live' },
    ]);
    assert.equal(Object.keys(report.read_models).sort(), [
      'collections',
      'differences',
      'documents',
      'events',
    ]);
  } finally {
    await svc.close();
  }
});

t.run();
