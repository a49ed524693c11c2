// A start reads the pending deliveries a page at a time. askForUnfinished (the runner's start) asks at
// once for each attempt handed out and never recorded; it read every pending delivery in one find:
// with a hung endpoint's tens of thousands pending, one read copying each document and one long hold of
// the event loop at every start. Here 50,000 pending deliveries sit in the read model: 1,500 in their
// lease on a hung endpoint (its queue's room, 1,000, taken oldest first), 300 in their lease among 3,000
// sharing one sweep_after (a page boundary falls among them), the rest scheduled retries (not asked
// for). The largest single read is counted, and the deliveries asked for must be the same as one read
// gives. Their requests are refused (no stream at revision 7: sweep-cost.ts), so nothing else moves.
import { AsyncLocalStorage } from 'node:async_hooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { EmbeddedCollection } from '../../src/adapters/document-store/embedded';
import { FixedClock } from '../../src/core/clock';
import type { EventStore } from '../../src/ports/event-store';
import { UNFINISHED_PAGE } from '../../src/webhooks/publisher';
import { countFinds, pendingDelivery } from '../helpers/sweep-cost';
import { startWebhooksWorld, type WebhooksWorld } from '../helpers/webhooks-world';

const KEY = { id: 'key_uc', token: 'couvert_pk_unfinishedcost_0000000000001', scopes: ['CUSTOMERS_READ'] };
const NOW = '2026-06-02T10:00:00.000Z';
const TIES = 3_000;

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: the cost of a start');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-unfinished-cost',
    clock: new FixedClock(NOW),
    key: KEY,
    endpoint: null,
    publisher: { sweepIntervalMs: 3_600_000 },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t(
  'a start over 50,000 pending deliveries reads them a page at a time, and asks for the same',
  async ({ w }) => {
    const publisher = w.running?.publisher;
    assert.ok(publisher);
    const col = w.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
    assert.ok(col instanceof EmbeddedCollection, 'the embedded store answers the start');
    const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
    const leased = (d: WebhookDeliveryDoc, due: string) => ({ ...d, next_attempt_at: due });
    const docs: WebhookDeliveryDoc[] = [];
    const expected = new Set<string>();
    // The hung endpoint's, in their lease, in no order: the 1,000 whose lease ends first are asked for.
    for (let i = 0; i < 1_500; i++) {
      const ms = ((i * 7919) % 1_500) * 10 + 1;
      const d = pendingDelivery(`hung_${i}`, 'we_hung', NOW, at(ms));
      docs.push(leased(d, at(ms - 60_000)));
      if ((i * 7919) % 1_500 < 1_000) expected.add(d._id);
    }
    // One sweep_after for 3,000, every tenth in its lease (each on its own endpoint: each asked for).
    for (let i = 0; i < TIES; i++) {
      const d = pendingDelivery(`tie_${i}`, `we_tie_${i}`, NOW, at(5_000));
      if (i % 10 === 0) {
        docs.push(leased(d, at(-55_000)));
        expected.add(d._id);
      } else docs.push(d);
    }
    // Scheduled retries (due at their sweep_after), before, among and after the others.
    while (docs.length < 50_000) {
      const i = docs.length;
      docs.push(
        pendingDelivery(`retry_${i}`, `we_retry_${i % 7}`, NOW, at(((i * 104_729) % 40_000) - 20_000)),
      );
    }
    await col.insertMany(docs);
    // The requests this start appends (the runner's own start may run beside it).
    const mine = new AsyncLocalStorage<boolean>();
    const asked: string[] = [];
    const events = w.rt.events as EventStore;
    const append = events.append.bind(events);
    events.append = (stream, list, expectedRevision, options) => {
      if (mine.getStore())
        for (const e of list)
          if (e.type === 'WebhookAttemptRequested')
            asked.push((e.data as { delivery_id: string }).delivery_id);
      return append(stream, list, expectedRevision, options);
    };
    let counted: Awaited<ReturnType<typeof countFinds<number>>>;
    try {
      counted = await countFinds(col, () => mine.run(true, () => publisher.askForUnfinished()));
    } finally {
      events.append = append;
    }
    assert.is(counted.result, 0, 'every request refused: no stream at revision 7');
    assert.is(asked.length, expected.size, `asked for ${asked.length}, ${expected.size} expected`);
    assert.equal(new Set(asked), expected);
    // Each once, and the run of one sweep_after ending a full page once more (read again by _id).
    assert.ok(
      counted.copied >= 50_000 && counted.copied <= 50_000 + UNFINISHED_PAGE,
      `copied ${counted.copied} for 50,000 pending`,
    );
    assert.ok(
      counted.mostCopied <= UNFINISHED_PAGE,
      `one read copied ${counted.mostCopied} documents (a page is ${UNFINISHED_PAGE})`,
    );
    // A page starting among ties reads on by _id, skipping none.
    assert.ok(counted.mostExamined <= UNFINISHED_PAGE, `one read examined ${counted.mostExamined} documents`);
  },
);

t.run();
