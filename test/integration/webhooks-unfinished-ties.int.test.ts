// A start pages through a run of equal sweep_after in bounded reads. Every delivery one start asks
// for gets the same sweep_after (now + lease), so a restart within the lease finds them all tied. Read
// by skip, each page re-read the run before it: 30,000 ties were 495,000 documents examined, 30,000 in
// one read. Here 30,000 share one sweep_after over 60 endpoints (every tenth in its lease, so asked
// for), between scheduled retries before and after; the largest read and the total examined are
// counted, and the deliveries asked for must be the same as one read gives. Their requests are
// refused (no stream at revision 7: sweep-cost.ts), so nothing else moves.
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

const KEY = { id: 'key_ut', token: 'couvert_pk_unfinishedties_000000000001', scopes: ['CUSTOMERS_READ'] };
const NOW = '2026-06-02T10:00:00.000Z';
const TIES = 30_000;

const t = suite<{ w: WebhooksWorld & { clock: FixedClock } }>('webhooks: a start among equal sweep_after');

t.before(async (ctx) => {
  ctx.w = await startWebhooksWorld({
    name: 'webhooks-unfinished-ties',
    clock: new FixedClock(NOW),
    key: KEY,
    endpoint: null,
    publisher: { sweepIntervalMs: 3_600_000 },
  });
});

t.after(async (ctx) => {
  await ctx.w?.close();
});

t('30,000 deliveries of one sweep_after are read a page at a time, each about once', async ({ w }) => {
  const publisher = w.running?.publisher;
  assert.ok(publisher);
  const col = w.rt.docs.collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES);
  assert.ok(col instanceof EmbeddedCollection, 'the embedded store answers the start');
  const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
  const docs: WebhookDeliveryDoc[] = [];
  const expected = new Set<string>();
  for (let i = 0; i < 700; i++) docs.push(pendingDelivery(`early_${i}`, `we_r_${i % 7}`, NOW, at(-i * 10)));
  // _ids in no order of their insertion: the run is read by _id, the index lists it as inserted.
  for (let i = 0; i < TIES; i++) {
    const n = (i * 7919) % TIES;
    const d = pendingDelivery(`tie_${String(n).padStart(5, '0')}`, `we_tie_${i % 60}`, NOW, at(60_000));
    if (i % 10 === 0) {
      docs.push({ ...d, next_attempt_at: at(0) });
      expected.add(d._id);
    } else docs.push(d);
  }
  for (let i = 0; i < 700; i++) docs.push(pendingDelivery(`late_${i}`, `we_r_${i % 7}`, NOW, at(61_000 + i)));
  await col.insertMany(docs);
  const mine = new AsyncLocalStorage<boolean>();
  const asked: string[] = [];
  const events = w.rt.events as EventStore;
  const append = events.append.bind(events);
  events.append = (stream, list, expectedRevision, options) => {
    if (mine.getStore())
      for (const e of list)
        if (e.type === 'WebhookAttemptRequested') asked.push((e.data as { delivery_id: string }).delivery_id);
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
  const total = docs.length;
  assert.ok(
    counted.mostExamined <= UNFINISHED_PAGE,
    `one read examined ${counted.mostExamined} documents (a page is ${UNFINISHED_PAGE})`,
  );
  // Each read once, and the page that reached the run once more.
  assert.ok(
    counted.examined <= total + UNFINISHED_PAGE,
    `examined ${counted.examined} documents for ${total} pending`,
  );
  assert.ok(counted.copied <= total + UNFINISHED_PAGE, `copied ${counted.copied} for ${total} pending`);
});

t.run();
