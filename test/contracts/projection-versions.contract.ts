// Projection versions on every pair of adapters: a new version rebuilds in the background while the
// old one serves, takes over when caught up (reads through the alias switch at once and stay
// consistent), the old version's collections are emptied after the grace period, a fresh store starts
// on the newest version, and a rebuild interrupted by a restart resumes from its own checkpoint.
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { DocumentStore } from '../../src/ports/document-store';
import type { EventStore } from '../../src/ports/event-store';
import { ANY } from '../../src/ports/event-store';
import { applyOnce } from '../../src/projection/idempotent';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import {
  AliasedDocumentStore,
  PROJECTION_VERSIONS,
  ProjectionVersions,
  type VersionDoc,
} from '../../src/projection/versions';
import { captureLog } from '../helpers/log-sink';
import { HANG_MS, withTimeout } from './event-store.helpers';

export interface VersionsFixture {
  events: EventStore;
  docs: DocumentStore;
  close(): Promise<void>;
}

const KEYS = 7;
/** One event type per test run, so a log shared by several tests (EventStoreDB) holds only this test's ticks for it. */
let TICK = 'Tick';

/** Version 1 counts Ticks per key; version 2 also sums their values (a schema change). */
function tally(version: 1 | 2): Projection {
  return {
    name: 'tally',
    version,
    collections: ['tally'],
    eventTypes: [TICK],
    async setup(docs) {
      await docs.collection('tally').createIndex({ keys: { key: 1 }, name: 'by_key' });
    },
    async apply(event, docs) {
      const { key, n } = event.data as { key: string; n: number };
      await applyOnce(
        docs.collection('tally'),
        key,
        event.position,
        version === 1 ? { $inc: { count: 1 }, $set: { key } } : { $inc: { count: 1, sum: n }, $set: { key } },
        { upsert: true },
      );
    },
  };
}

async function tick(events: EventStore, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i += 50) {
    const batch = Array.from({ length: Math.min(50, from + count - i) }, (_, k) => ({
      type: TICK,
      data: { key: `k${(i + k) % KEYS}`, n: i + k },
    }));
    await events.append(`ticks-${i % 3}`, batch, ANY);
  }
}

/** What either version must hold after `total` ticks (0 … total-1). */
function expected(total: number, version: 1 | 2) {
  const out = new Map<string, { count: number; sum?: number }>();
  for (let i = 0; i < total; i++) {
    const k = `k${i % KEYS}`;
    const cur = out.get(k) ?? (version === 2 ? { count: 0, sum: 0 } : { count: 0 });
    cur.count++;
    if (version === 2) cur.sum = (cur.sum ?? 0) + i;
    out.set(k, cur);
  }
  return out;
}

async function read(docs: DocumentStore, name: string) {
  const rows = await docs.collection(name).find({}, { sort: { _id: 1 } });
  return new Map(
    rows.map((r) => [r._id, r.sum === undefined ? { count: r.count } : { count: r.count, sum: r.sum }]),
  );
}

async function open(f: VersionsFixture, projections: Projection[], graceMs = 100) {
  const { logger, lines } = captureLog();
  const aliased = new AliasedDocumentStore(f.docs);
  const versions = new ProjectionVersions(f.events, f.docs, aliased, {
    logger,
    graceMs,
    batchSize: 100,
    progressEveryMs: 0,
  });
  const runner = new ProjectionRunner(f.events, f.docs, await versions.prepare(projections));
  await runner.start();
  return { versions, runner, aliased, lines };
}

export function projectionVersionsContract(test: Test, make: () => Promise<VersionsFixture>): void {
  let run = 0;
  test.before.each(() => {
    TICK = `Tick${Date.now().toString(36)}${run++}`;
  });
  test('a fresh store starts on the newest version at once', async () => {
    const f = await make();
    try {
      await tick(f.events, 0, 200);
      const p = await open(f, [tally(1), tally(2)]);
      await p.runner.catchUp();
      assert.is(p.aliased.resolve('tally'), 'tally_v2');
      assert.equal(await read(p.aliased, 'tally'), expected(200, 2));
      assert.is(await f.docs.collection('tally').count(), 0, 'version 1 never built');
      await p.versions.stop();
    } finally {
      await f.close();
    }
  });

  test('version 2 rebuilds while version 1 serves, then takes over; reads never go back; v1 is emptied', async () => {
    const f = await make();
    try {
      await tick(f.events, 0, 3000);
      const before = await open(f, [tally(1)]);
      await before.runner.catchUp();
      await before.versions.stop();
      // A restart with version 2 in the code.
      const p = await open(f, [tally(1), tally(2)]);
      assert.is(p.aliased.resolve('tally'), 'tally', 'version 1 still serves');
      p.versions.startPendingBuilds();
      const built = p.versions.whenBuilt('tally');
      let done = false;
      void built.then(() => {
        done = true;
      });
      // Live traffic meanwhile: writes applied by the main runner, reads through the alias.
      let total = 3000;
      let lastCount = 0;
      let sawV1 = 0;
      while (!done) {
        await tick(f.events, total, 20);
        total += 20;
        await p.runner.catchUp();
        const figures = await read(p.aliased, 'tally');
        const count = [...figures.values()].reduce((a, r) => a + (r.count as number), 0);
        assert.is(count, total, 'every tick applied is read, whichever version serves');
        assert.ok(count >= lastCount);
        lastCount = count;
        if (p.aliased.resolve('tally') === 'tally') sawV1++;
        await new Promise((r) => setTimeout(r, 1)); // a request's I/O: the event loop turns
      }
      await withTimeout(built, HANG_MS, 'the rebuild');
      assert.ok(sawV1 > 0, 'version 1 served reads during the rebuild');
      assert.is(p.aliased.resolve('tally'), 'tally_v2');
      const doc = (await f.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .findOne({ _id: 'tally' })) as VersionDoc;
      assert.is(doc.active, 2);
      assert.equal(doc.collections, { tally: 'tally_v2' });
      assert.ok(doc.switched_at);
      // After the switch the slot applies version 2.
      await tick(f.events, total, 100);
      total += 100;
      await p.runner.catchUp();
      assert.equal(await read(p.aliased, 'tally'), expected(total, 2));
      const log = p.lines.join('');
      assert.match(log, /projection rebuild started/);
      assert.match(log, /projection rebuild progress/);
      assert.match(log, /"events_per_s":\d+/);
      assert.match(log, /projection version switched/);
      // The grace period over, version 1 is emptied.
      await withTimeout(
        (async () => {
          while ((await f.docs.collection('tally').count()) > 0) await new Promise((r) => setTimeout(r, 20));
        })(),
        HANG_MS,
        'version 1 emptied',
      );
      await p.versions.stop();
      // A later process starts on version 2 and carries on from the same checkpoint.
      const later = await open(f, [tally(2)]);
      assert.is(later.aliased.resolve('tally'), 'tally_v2');
      await tick(f.events, total, 10);
      total += 10;
      await later.runner.catchUp();
      assert.equal(await read(later.aliased, 'tally'), expected(total, 2));
      await later.versions.stop();
    } finally {
      await f.close();
    }
  });

  test('a rebuild interrupted by a restart resumes from its own checkpoint', async () => {
    const f = await make();
    try {
      await tick(f.events, 0, 4000);
      const first = await open(f, [tally(1)]);
      await first.runner.catchUp();
      await first.versions.stop();
      const p = await open(f, [tally(1), tally(2)]);
      p.versions.startPendingBuilds();
      // Stop once the build has committed something.
      await withTimeout(
        (async () => {
          while ((await f.docs.getCheckpoint('tally@v2')) === null) await new Promise((r) => setImmediate(r));
        })(),
        HANG_MS,
        'a first batch',
      );
      await p.versions.stop();
      const stoppedAt = await f.docs.getCheckpoint('tally@v2');
      assert.ok(stoppedAt !== null);
      assert.is(p.aliased.resolve('tally'), 'tally', 'not switched');
      const q = await open(f, [tally(1), tally(2)]);
      assert.is(q.aliased.resolve('tally'), 'tally');
      q.versions.startPendingBuilds();
      await withTimeout(q.versions.whenBuilt('tally'), HANG_MS, 'the resumed rebuild');
      assert.match(q.lines.join(''), /projection version switched/);
      assert.equal(await read(q.aliased, 'tally'), expected(4000, 2));
      await q.versions.stop();
    } finally {
      await f.close();
    }
  });

  test('a restart within the grace period: the next start drops the replaced version, as recorded', async () => {
    const f = await make();
    try {
      await tick(f.events, 0, 300);
      const first = await open(f, [tally(1)]);
      await first.runner.catchUp();
      await first.versions.stop();
      // Version 2 takes over; the process stops before the (hour-long) grace period is over.
      const p = await open(f, [tally(1), tally(2)], 3_600_000);
      p.versions.startPendingBuilds();
      await withTimeout(p.versions.whenBuilt('tally'), HANG_MS, 'the rebuild');
      await p.versions.stop();
      assert.ok((await f.docs.collection('tally').count()) > 0, 'version 1 still there');
      const recorded = (await f.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .findOne({ _id: 'tally' })) as VersionDoc;
      assert.equal(recorded.retired, ['tally'], 'the switch records what it retires');
      // The next start, with version 1 gone from the code: the record alone names it.
      const next = await open(f, [tally(2)], 0);
      next.versions.startPendingBuilds();
      await withTimeout(next.versions.whenRetired(), HANG_MS, 'the retirement');
      assert.is(await f.docs.collection('tally').count(), 0, 'version 1 dropped');
      const after = (await f.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .findOne({ _id: 'tally' })) as VersionDoc;
      assert.equal(after.retired, [], 'nothing left to retire');
      assert.equal(await read(next.aliased, 'tally'), expected(300, 2), 'version 2 untouched');
      await next.versions.stop();
      // A store switched before `retired` was recorded: the versions below the active one in the code.
      await f.docs.collection('tally').insertOne({ _id: 'k0', count: 1 });
      await f.docs.collection(PROJECTION_VERSIONS).updateOne({ _id: 'tally' }, { $unset: { retired: '' } });
      const older = await open(f, [tally(1), tally(2)], 0);
      older.versions.startPendingBuilds();
      await withTimeout(older.versions.whenRetired(), HANG_MS, 'the retirement');
      assert.is(await f.docs.collection('tally').count(), 0, 'version 1 dropped again');
      await older.versions.stop();
    } finally {
      await f.close();
    }
  });

  test('a replaced version written again after its drop stays recorded, and the next start drops it', async () => {
    const f = await make();
    try {
      await tick(f.events, 0, 300);
      const first = await open(f, [tally(1)]);
      await first.runner.catchUp();
      await first.versions.stop();
      // A process still on version 1 writes into it right after the drop.
      const late: DocumentStore = new Proxy(f.docs, {
        get(target, prop) {
          if (prop === 'dropCollections')
            return async (names: readonly string[]) => {
              await target.dropCollections(names);
              await target.collection('tally').insertOne({ _id: 'k0', count: 1 });
            };
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const p = await open({ ...f, docs: late }, [tally(1), tally(2)], 0);
      p.versions.startPendingBuilds();
      await withTimeout(p.versions.whenBuilt('tally'), HANG_MS, 'the rebuild');
      await withTimeout(p.versions.whenRetired(), HANG_MS, 'the retirement');
      await p.versions.stop();
      assert.is(await f.docs.collection('tally').count(), 1, 'written again');
      const recorded = (await f.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .findOne({ _id: 'tally' })) as VersionDoc;
      assert.equal(recorded.retired, ['tally'], 'still to retire');
      const next = await open(f, [tally(2)], 0);
      next.versions.startPendingBuilds();
      await withTimeout(next.versions.whenRetired(), HANG_MS, 'the retirement');
      assert.is(await f.docs.collection('tally').count(), 0, 'dropped at the next start');
      await next.versions.stop();
    } finally {
      await f.close();
    }
  });
}
