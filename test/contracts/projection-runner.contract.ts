// The projection runner's contract, run against every pair of adapters (event store × document store):
// at-least-once feeding, per-projection checkpoints, resume after a restart, idempotent re-application,
// live following and read-your-writes waits.
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import { systemClock } from '../../src/core/clock';
import { createLogger, type Logger } from '../../src/logger';
import { type DocumentStore, InvalidQueryError, isPermanentRefusal } from '../../src/ports/document-store';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store';
import { followForever, readProjectorState } from '../../src/projection/follow';
import { applyOnce } from '../../src/projection/idempotent';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { HANG_MS, withTimeout } from './event-store.helpers';

export interface RunnerFixture {
  events: EventStore;
  docs: DocumentStore;
  /** A second document-store handle on the same data (a restarted process), or the same one. */
  reopenDocs(): Promise<DocumentStore>;
  close(): Promise<void>;
}

/** Counts Added events per counter with $inc, guarded by applyOnce; records every delivery. */
function counterProjection(name: string, deliveries: RecordedEvent[] = []): Projection {
  return {
    name,
    eventTypes: ['Added'],
    async setup(docs) {
      await docs.collection(`${name}_counters`).createIndex({ keys: { group: 1 }, name: 'by_group' });
    },
    async apply(event, docs) {
      deliveries.push(event);
      const d = event.data as { counter: string; by: number };
      await applyOnce(
        docs.collection(`${name}_counters`),
        d.counter,
        event.position,
        { $inc: { total: d.by }, $set: { group: 'g' } },
        { upsert: true },
      );
    },
  };
}

const added = (counter: string, by = 1) => ({ type: 'Added', data: { counter, by } });

export function projectionRunnerContract(test: Test, fixture: () => Promise<RunnerFixture>): void {
  let f: RunnerFixture;
  let prefix = '';
  let n = 0;
  test.before.each(async () => {
    f = await fixture();
    prefix = `p${Date.now().toString(36)}${n++}`;
  });
  test.after.each(async () => {
    await f.close();
  });

  const total = async (docs: DocumentStore, name: string, counter: string) =>
    ((await docs.collection(`${name}_counters`).findOne({ _id: counter })) as { total?: number } | null)
      ?.total ?? 0;

  test('catchUp applies the log and stores a checkpoint per projection', async () => {
    const name = `${prefix}_a`;
    await f.events.append(`${prefix}-1`, [added('x'), added('x', 2)], 'any');
    await f.events.append(`${prefix}-2`, [added('y', 5), { type: 'Ignored', data: {} }], 'any');
    const runner = new ProjectionRunner(f.events, f.docs, [counterProjection(name)]);
    await runner.start();
    await runner.catchUp();
    assert.is(await total(f.docs, name, 'x'), 3);
    assert.is(await total(f.docs, name, 'y'), 5);
    assert.equal(await f.docs.getCheckpoint(name), await f.events.headPosition());
    assert.equal(runner.position, await f.events.headPosition());
  });

  test('re-delivering events changes nothing (at least once is safe)', async () => {
    const name = `${prefix}_b`;
    await f.events.append(`${prefix}-1`, [added('x'), added('x'), added('z', 4)], 'any');
    const deliveries: RecordedEvent[] = [];
    const projection = counterProjection(name, deliveries);
    const runner = new ProjectionRunner(f.events, f.docs, [projection]);
    await runner.catchUp();
    for (const e of [...deliveries]) await projection.apply(e, f.docs);
    assert.is(await total(f.docs, name, 'x'), 2);
    assert.is(await total(f.docs, name, 'z'), 4);
  });

  test('after a restart only events past the checkpoint are applied', async () => {
    const name = `${prefix}_c`;
    await f.events.append(`${prefix}-1`, [added('x'), added('x')], 'any');
    await new ProjectionRunner(f.events, f.docs, [counterProjection(name)]).catchUp();
    await f.events.append(`${prefix}-1`, [added('x', 10)], 'any');
    const docs = await f.reopenDocs();
    const deliveries: RecordedEvent[] = [];
    const restarted = new ProjectionRunner(f.events, docs, [counterProjection(name, deliveries)]);
    await restarted.catchUp();
    assert.is(deliveries.length, 1, 'only the new event is delivered');
    assert.is(await total(docs, name, 'x'), 12);
  });

  test('a projection added later catches up from the start without re-feeding the others', async () => {
    const old = `${prefix}_old`;
    const fresh = `${prefix}_new`;
    await f.events.append(`${prefix}-1`, [added('x', 2), added('x', 3)], 'any');
    await new ProjectionRunner(f.events, f.docs, [counterProjection(old)]).catchUp();
    const oldDeliveries: RecordedEvent[] = [];
    const runner = new ProjectionRunner(f.events, f.docs, [
      counterProjection(old, oldDeliveries),
      counterProjection(fresh),
    ]);
    await runner.catchUp();
    assert.is(oldDeliveries.length, 0);
    assert.is(await total(f.docs, fresh, 'x'), 5);
    assert.is(await total(f.docs, old, 'x'), 5);
  });

  test('concurrent catchUp calls are serialised: each event is applied once', async () => {
    const name = `${prefix}_d`;
    for (let i = 0; i < 20; i++) await f.events.append(`${prefix}-${i % 3}`, [added('x')], 'any');
    const deliveries: RecordedEvent[] = [];
    const runner = new ProjectionRunner(f.events, f.docs, [counterProjection(name, deliveries)]);
    await Promise.all([runner.catchUp(), runner.catchUp(), runner.catchUp()]);
    assert.is(deliveries.length, 20);
    assert.is(await total(f.docs, name, 'x'), 20);
  });

  test('follow() applies live events; waitFor(position) resolves once they are applied', async () => {
    const name = `${prefix}_e`;
    await f.events.append(`${prefix}-1`, [added('x')], 'any');
    const projector = new ProjectionRunner(f.events, f.docs, [counterProjection(name)]);
    const following = projector.follow();
    const reader = new ProjectionRunner(f.events, f.docs, [counterProjection(name)]);
    const r = await f.events.append(`${prefix}-1`, [added('x', 41)], 'any');
    assert.ok(
      await withTimeout(reader.waitFor(r.position, HANG_MS), HANG_MS + 5_000, 'waitFor'),
      'the write became visible',
    );
    assert.is(await total(f.docs, name, 'x'), 42);
    assert.is(await reader.waitFor(r.position + 1_000_000n, 50), false, 'a position never reached times out');
    await projector.stop();
    await withTimeout(following, HANG_MS, 'follow() to end after stop()');
  });

  // The projector names what failed (src/projection/follow.ts logs it and reports it on /healthz): the
  // projection, the event and its position, in catch-ups and live; the error itself is rethrown as is.
  const refusing = (name: string): Projection => ({
    name,
    eventTypes: ['Added'],
    async apply(event, docs) {
      const d = event.data as { counter: string; by: number };
      if (d.counter === 'refused') throw new Error(`refused ${event.position}`);
      await docs
        .collection(`${name}_seen`)
        .replaceOne({ _id: d.counter }, { _id: d.counter }, { upsert: true });
    },
  });

  test('a projection that throws: the runner names it and the event (lastFailure), and rethrows the error', async () => {
    const name = `${prefix}_f`;
    await f.events.append(`${prefix}-1`, [added('x')], 'any');
    const bad = await f.events.append(`${prefix}-1`, [added('refused')], 'any');
    const runner = new ProjectionRunner(f.events, f.docs, [counterProjection(`${name}_ok`), refusing(name)]);
    const err = await runner.catchUp().then(
      () => null,
      (e: unknown) => e,
    );
    assert.instance(err, Error);
    assert.is((err as Error).message, `refused ${bad.position}`, 'the error as the projection threw it');
    const failure = runner.lastFailure;
    assert.ok(failure, 'the failure is recorded');
    assert.is(failure.projection, name);
    assert.is(failure.event.position, bad.position);
    assert.is(failure.event.type, 'Added');
    assert.is(failure.error, err);

    // Live: the same for an event followed.
    const live = `${prefix}_g`;
    const follower = new ProjectionRunner(f.events, f.docs, [refusing(live)]);
    await f.docs.setCheckpoint(live, bad.position);
    const following = follower.follow().then(
      () => null,
      (e: unknown) => e,
    );
    const later = await f.events.append(`${prefix}-2`, [added('refused')], 'any');
    const liveErr = await withTimeout(following, HANG_MS, 'follow() to fail');
    assert.is((liveErr as Error).message, `refused ${later.position}`);
    assert.is(follower.lastFailure?.projection, live);
    assert.is(follower.lastFailure?.event.position, later.position);
    await follower.stop();
  });

  // The projector (src/projection/follow.ts) stops on a write the store refuses whatever the retry, and
  // retries any other failure forever: which is which is the adapter's mapping of the server's errors.
  // A $inc on a text field is refused by both stores (MongoDB: TypeMismatch), for good.
  test('the projector stops on a write the store refuses for good, recording where; the checkpoint stays before it', async () => {
    const name = `${prefix}_h`;
    const col = `${name}_values`;
    const typed: Projection = {
      name,
      eventTypes: ['Added'],
      async apply(event, docs) {
        const d = event.data as { counter: string };
        if (d.counter === `${prefix}-text`)
          await docs.collection(col).replaceOne({ _id: 'v' }, { _id: 'v', n: 'text' }, { upsert: true });
        else if (d.counter === `${prefix}-inc`)
          await docs.collection(col).updateOne({ _id: 'v' }, { $inc: { n: 1 } });
      },
    };
    await f.events.append(`${prefix}-1`, [added(`${prefix}-text`)], 'any');
    const bad = await f.events.append(`${prefix}-1`, [added(`${prefix}-inc`)], 'any');
    const runner = new ProjectionRunner(f.events, f.docs, [typed]);
    const errors: string[] = [];
    const logger = {
      ...createLogger('silent'),
      error: (_: unknown, message: string) => {
        errors.push(message);
      },
    } as unknown as Logger;
    const sleeps: number[] = [];
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      // A retry: the refusal was taken for a transient failure. Stop, so the test ends and says so.
      await runner.stop();
    };
    await withTimeout(
      followForever(runner, { logger, clock: systemClock, sleep }),
      120_000,
      'the projector to stop',
    );
    assert.equal(sleeps, [], `no retry of a write refused for good (${errors.join('; ')})`);
    const err = runner.lastFailure?.error;
    assert.instance(err, InvalidQueryError, String(err));
    assert.ok(isPermanentRefusal(err));
    assert.is(runner.halted?.projection, name);
    assert.is(runner.halted?.position, bad.position.toString());
    const recorded = await readProjectorState(f.docs);
    assert.is(recorded?.state, 'stopped', 'recorded for projections status');
    assert.is(recorded?.event_id, runner.lastFailure?.event.id);
    // Never past the refused event (a catch-up commits at its batch's end: here none yet).
    const checkpoint = await f.docs.getCheckpoint(name);
    assert.ok(checkpoint === null || checkpoint < bad.position, String(checkpoint));
    // The event before it applied or not (embedded, a batch's writes land at its commit); the refused one never.
    const stored = await f.docs.collection(col).findOne({ _id: 'v' });
    assert.ok(stored === null || stored.n === 'text', JSON.stringify(stored));
    await runner.stop();
  });
}
