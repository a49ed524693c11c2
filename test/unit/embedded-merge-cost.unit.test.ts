// Which way a sweeper's find reads is chosen by what it would read. The sweeper leaves the endpoints
// whose queue is full out (`endpoint_id: {$nin}`); merging the other endpoints' levels of
// pending_by_endpoint never reads the left-out documents but opens a level for every other endpoint with
// a pending delivery, due or not; reading `work` in order reads the left-out due ones to refuse them.
// Beside a full endpoint's big backlog the merge is the cheap one; among many endpoints holding one
// later retry each, beside a small backlog, reading past the backlog is (the merge opened 10,000
// levels a sweep). Counted: documents handed to the filter and levels opened, both shapes bounded.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { WEBHOOK_DELIVERIES, webhookDeliveriesProjection } from '../../projections/webhook-deliveries';
import { EmbeddedCollection, EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { plainSort } from '../../src/adapters/document-store/embedded-collection';
import type { Doc, Filter } from '../../src/ports/document-store';

const test = suite('embedded store: a merge chosen by its cost');

const NOW = Date.UTC(2026, 10, 28, 10, 0, 0);
const at = (s: number): string => new Date(NOW + s * 1000).toISOString();

async function deliveries(docs: Doc[]): Promise<EmbeddedCollection> {
  const store = new EmbeddedDocumentStore();
  await webhookDeliveriesProjection.setup?.(store);
  const col = store.collection(WEBHOOK_DELIVERIES);
  assert.ok(col instanceof EmbeddedCollection);
  await col.insertMany(docs);
  return col;
}

const pending = (id: string, endpoint: string, sweepAfter: string): Doc => ({
  _id: id,
  endpoint_id: endpoint,
  status: 'pending',
  sweep_after: sweepAfter,
  created_at: at(-86_400),
});

/**
 * The sweeper's find, its cost, and what sorting every match gives (ties may come in another order,
 * as between two MongoDB plans: compared by sweep_after).
 */
async function sweep(col: EmbeddedCollection, docs: Doc[], limit: number) {
  const filter: Filter = {
    status: 'pending',
    sweep_after: { $lte: at(0) },
    endpoint_id: { $nin: ['we_full'] },
  };
  const examined = col.examined;
  const opened = col.opened;
  const page = await col.find(filter, { sort: { sweep_after: 1 }, limit });
  const expected = plainSort(
    docs.filter((d) => (d.sweep_after as string) <= at(0) && d.endpoint_id !== 'we_full'),
    { sweep_after: 1 },
  ) as Doc[];
  const order = (docs: Doc[]) => docs.map((d) => d.sweep_after);
  assert.ok(
    page.every((d) => d.endpoint_id !== 'we_full'),
    'none of the full endpoint',
  );
  assert.is(new Set(page.map((d) => d._id)).size, page.length, 'each once');
  return {
    page: order(page),
    expected: order(expected.slice(0, limit)),
    examined: col.examined - examined,
    opened: col.opened - opened,
  };
}

test('many endpoints with one later retry each beside a small backlog: no level opened per endpoint', async () => {
  const docs: Doc[] = [];
  for (let i = 0; i < 2_000; i++) docs.push(pending(`full_${i}`, 'we_full', at(-3_600 + i)));
  for (let i = 0; i < 10_000; i++) docs.push(pending(`later_${i}`, `we_${i}`, at(60 + (i % 600))));
  for (let i = 0; i < 30; i++) docs.push(pending(`due_${i}`, `we_${i}`, at(-10 + (i % 5))));
  const col = await deliveries(docs);
  const { page, expected, examined, opened } = await sweep(col, docs, 50);
  assert.equal(page, expected);
  assert.is(page.length, 30);
  // Reading past the 2,000 left out: about them and the page; the merge opened 10,000 levels.
  assert.ok(opened + examined <= 2_000 + 50, `opened ${opened} levels, examined ${examined} documents`);
});

test("a full endpoint's big backlog beside a few endpoints: its documents are not read", async () => {
  const docs: Doc[] = [];
  for (let i = 0; i < 50_000; i++) docs.push(pending(`full_${i}`, 'we_full', at(-7_200 + (i % 7_000))));
  for (let i = 0; i < 200; i++) docs.push(pending(`later_${i}`, `we_${i}`, at(60 + i)));
  for (let i = 0; i < 100; i++) docs.push(pending(`due_${i}`, `we_${i % 4}`, at(-60 + (i % 50))));
  const col = await deliveries(docs);
  const { page, expected, examined, opened } = await sweep(col, docs, 50);
  assert.equal(page, expected);
  assert.is(page.length, 50);
  // A level for each of the 200 other endpoints and about the page; reading `work` examined 50,050.
  assert.ok(opened + examined <= 200 + 50, `opened ${opened} levels, examined ${examined} documents`);
});

test('one backlog of many equal sweep_after counts as its documents, not its one key', async () => {
  const docs: Doc[] = [];
  // A start asks for every pending delivery at once: they share one sweep_after (now + lease).
  for (let i = 0; i < 20_000; i++) docs.push(pending(`full_${i}`, 'we_full', at(-30)));
  for (let i = 0; i < 500; i++) docs.push(pending(`later_${i}`, `we_${i}`, at(60 + i)));
  for (let i = 0; i < 10; i++) docs.push(pending(`due_${i}`, `we_${i}`, at(-10)));
  const col = await deliveries(docs);
  const { page, expected, examined, opened } = await sweep(col, docs, 50);
  assert.equal(page, expected);
  assert.ok(opened + examined <= 500 + 50, `opened ${opened} levels, examined ${examined} documents`);
});

test.run();
