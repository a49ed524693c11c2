// The scaled-out projector and a write the document store refuses for good (MongoDB: a document past
// 16 MB, one failing validation; the adapter maps them to DocumentRefusedError). Before, followForever
// restarted the follow after every failure, with backoff, forever: the same refused write again every
// 30 s, one log line "projector failed; restarting" naming neither projection nor event, /healthz 200
// and `projections status` showing nothing but a checkpoint that no longer moved. Now a permanent
// refusal stops the projector with an error naming the projection, the event and its position;
// /healthz answers 503 with them and `projections status` shows them. A transient failure (a
// connection lost) is still retried until it passes. No container runtime here: the stand-ins are the
// in-memory log and the embedded document store behind a refusing wrapper (the port, as MongoDB's
// adapter reports it).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import { systemClock } from '../../src/core/clock';
import { createLogger, type Logger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { type Collection, DocumentRefusedError, type DocumentStore } from '../../src/ports/document-store';
import { followForever, PROJECTOR_STATE, readProjectorState } from '../../src/projection/follow';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { runCli } from '../helpers/cli-in-process';

const HANG_MS = 120_000;

/** The embedded store standing in for MongoDB, except that a replaceOne of a document `refuse` picks throws what it returns. */
function refusingStore(
  inner: DocumentStore,
  refuse: (doc: Record<string, unknown>) => Error | null,
): DocumentStore {
  return new Proxy(inner, {
    get(target, key) {
      // As MongoDB: written as applied, no write-back cache (what the projector runs on).
      if (key === 'kind') return 'mongodb';
      if (key === 'collection')
        return (name: string) => {
          const c = target.collection(name);
          return new Proxy(c, {
            get(col, k) {
              if (k === 'replaceOne')
                return (
                  filter: never,
                  doc: Record<string, unknown> & { _id: string },
                  options?: { upsert?: boolean },
                ) => {
                  const err = refuse(doc);
                  return err ? Promise.reject(err) : col.replaceOne(filter, doc, options);
                };
              const v = Reflect.get(col, k);
              return typeof v === 'function' ? v.bind(col) : v;
            },
          }) as Collection;
        };
      const v = Reflect.get(target, key);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** Keeps each note's text in its own document. */
const notes: Projection = {
  name: 'notes',
  eventTypes: ['Noted'],
  async apply(event, docs) {
    const d = event.data as { id: string; text: string };
    await docs.collection('notes').replaceOne({ _id: d.id }, { _id: d.id, text: d.text }, { upsert: true });
  },
};

const tooLarge = () =>
  new DocumentRefusedError(
    'BSONObj size: 16793600 (0x1004000) is invalid. Size must be between 0 and 16793600(16MB)',
  );

interface Logged {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}
function capturingLogger(): { logger: Logger; lines: Logged[] } {
  const lines: Logged[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  const logger = {
    ...createLogger('silent'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
  } as Logger;
  return { logger, lines };
}

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + HANG_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const follow = suite('projector: permanent and transient refusals');

follow(
  'a write the store refuses for good stops the projector, naming projection, event and position',
  async () => {
    const events = new MemoryEventStore();
    const docs = refusingStore(new EmbeddedDocumentStore(), (doc) =>
      doc.text === 'huge' ? tooLarge() : null,
    );
    await events.append('note-1', [{ type: 'Noted', data: { id: 'a', text: 'fine' } }], 'any');
    const bad = await events.append('note-2', [{ type: 'Noted', data: { id: 'b', text: 'huge' } }], 'any');
    await events.append('note-3', [{ type: 'Noted', data: { id: 'c', text: 'after' } }], 'any');
    const runner = new ProjectionRunner(events, docs, [notes]);
    const { logger, lines } = capturingLogger();
    const sleeps: number[] = [];
    // Each restart would sleep first: a permanent refusal must never get there.
    const sleep = async (ms: number) => {
      sleeps.push(ms);
      if (sleeps.length > 3) await runner.stop();
    };
    await followForever(runner, { logger, clock: systemClock, sleep });
    assert.equal(sleeps, [], 'no retry of a refusal that cannot pass');
    assert.not.ok(runner.isStopped, 'it returned on its own, not because the test stopped it');

    const [event] = (await events.readStream('note-2')).filter((e) => e.position === bad.position);
    assert.ok(event);
    const halt = runner.halted;
    assert.ok(halt, 'the runner says it stopped');
    assert.is(halt.projection, 'notes');
    assert.is(halt.event_type, 'Noted');
    assert.is(halt.event_id, event.id);
    assert.is(halt.position, bad.position.toString());
    assert.match(halt.error, 'DocumentRefusedError: BSONObj size');

    const errors = lines.filter((l) => l.level === 'error');
    assert.is(errors.length, 1, 'one error, not one per retry');
    assert.is(errors[0]?.fields.projection, 'notes');
    assert.is(errors[0]?.fields.event_type, 'Noted');
    assert.is(errors[0]?.fields.event_id, event.id);
    assert.is(errors[0]?.fields.position, bad.position.toString());
    assert.match(errors[0]?.message ?? '', 'projector stopped');

    // The read models stay before the refused event; the stop is recorded for `projections status`.
    assert.ok(((await docs.getCheckpoint('notes')) ?? 0n) < bad.position, 'the checkpoint is before it');
    assert.is((await docs.collection('notes').findOne({ _id: 'c' })) === null, true);
    const recorded = await readProjectorState(docs);
    assert.is(recorded?.projection, 'notes');
    assert.is(recorded?.position, bad.position.toString());

    // A restart (the projection or the data fixed) clears the record and goes on.
    const fixed = new ProjectionRunner(events, new EmbeddedDocumentStore(), [notes]);
    await fixed.docs.collection(PROJECTOR_STATE).insertOne({ ...(recorded as object), _id: 'projector' });
    const following = followForever(fixed, { logger, clock: systemClock, sleep });
    await until(
      'the fixed projector to catch up',
      async () => (await fixed.docs.getCheckpoint('notes')) !== null,
    );
    assert.is(await readProjectorState(fixed.docs), null, 'the restart cleared the stop');
    await fixed.stop();
    await following;
  },
);

follow('a transient failure (a connection lost) is retried until it passes', async () => {
  const events = new MemoryEventStore();
  let failures = 2;
  const docs = refusingStore(new EmbeddedDocumentStore(), () =>
    failures-- > 0
      ? Object.assign(new Error('connection 3 to 10.0.0.5:27017 closed'), { name: 'MongoNetworkError' })
      : null,
  );
  const last = await events.append('note-1', [{ type: 'Noted', data: { id: 'a', text: 'fine' } }], 'any');
  const runner = new ProjectionRunner(events, docs, [notes]);
  const { logger, lines } = capturingLogger();
  const sleeps: number[] = [];
  const following = followForever(runner, {
    logger,
    clock: systemClock,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  await until(
    'the projector to apply the event',
    async () => (await docs.getCheckpoint('notes')) === last.position,
  );
  assert.equal(sleeps, [500, 1000], 'retried with backoff');
  assert.is(runner.halted, null);
  const retried = lines.filter((l) => l.message === 'projector failed; restarting');
  assert.is(retried.length, 2);
  assert.is(retried[0]?.fields.projection, 'notes', 'the retry names the projection too');
  await runner.stop();
  await following;
});

follow.run();

const service = suite('projector: a stop on a refusal is visible on /healthz and in projections status');

service(
  'the projector role stopped on a refusal: /healthz 503 names it, projections status too',
  async () => {
    registerModules();
    const config = loadConfig({
      STORE: 'eventstoredb',
      EVENTSTORE_URL: 'esdb://unused:2113',
      MONGODB_URL: 'mongodb://unused',
      SECRETS_KEY: 'ab'.repeat(32),
      LOG_LEVEL: 'silent',
      ROLES: 'projector',
      PORT: '0',
      HOST: '127.0.0.1',
    });
    const events = new MemoryEventStore();
    const docs = refusingStore(new EmbeddedDocumentStore(), (doc) =>
      doc.text === 'huge' ? tooLarge() : null,
    );
    const bad = await events.append('note-1', [{ type: 'Noted', data: { id: 'b', text: 'huge' } }], 'any');
    const svc = await startService(config, {
      events,
      docs,
      keys: new MemoryKeyStore(),
      projections: [notes],
      logger: createLogger('silent'),
      demo: false,
    });
    try {
      let health: { status: number; body: Record<string, unknown> } = { status: 0, body: {} };
      await until('/healthz to report the stop', async () => {
        const res = await fetch(`${svc.url}/healthz`);
        health = { status: res.status, body: (await res.json()) as Record<string, unknown> };
        return res.status !== 200;
      });
      assert.is(health.status, 503);
      const error = health.body.error as { code: string; message: string; details: Record<string, unknown> };
      assert.is(error.code, 'INTERNAL_ERROR', 'in the envelope, as every 503');
      assert.is(error.details.reason, 'PROJECTOR_STOPPED');
      assert.match(error.message, 'restart the projector');
      const projector = error.details.projector as Record<string, unknown>;
      assert.is(projector.state, 'stopped');
      assert.is(projector.projection, 'notes');
      assert.is(projector.event_type, 'Noted');
      // Public route: no position (it counts the whole platform's events) nor event id; the CLI has them.
      assert.not.ok('position' in projector, 'no position');
      assert.not.ok('event_id' in projector, 'no event id');
      assert.not.ok('read_models_position' in error.details, 'no read-model position');
      // Unauthenticated route: the error's name, never the store's message (it can quote a document).
      assert.is(projector.error, 'DocumentRefusedError');
      assert.not.match(JSON.stringify(health.body), 'BSONObj');

      await until('the stop to be recorded', async () => (await readProjectorState(docs)) !== null);
      const text = await runCli(svc, 'projections status', {});
      assert.match(text.join('\n'), `PROJECTOR STOPPED`);
      assert.match(text.join('\n'), `at position ${bad.position}`);
      const rows = (await runCli(svc, 'projections status', { json: true })).map(
        (l) => JSON.parse(l) as { projection: string; state: string },
      );
      assert.match(rows.find((r) => r.projection === 'notes')?.state ?? '', /^stopped: /);
    } finally {
      await svc.stop();
    }
  },
);

service.run();
