// The dashboard sessions' sweep (`deleteMany` on `expires_at`, every 100th sign-in of a process) is
// served by an index on `expires_at`, made before the first session is stored; without it MongoDB
// scans every session of every process at each sweep. No server: a fake store records the calls.
import type { Context } from 'koa';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import type { IndexSpec } from '../../src/ports/document-store';
import type { Runtime } from '../../src/runtime';
import { SESSIONS, startSignedInSession } from '../../src/web/sessions';

const test = suite('web sessions: the sweep has its index');

function fakeRuntime(indexFails = false) {
  const calls: { collection: string; op: string; arg: unknown }[] = [];
  const logged: unknown[] = [];
  const collection = (name: string) => ({
    name,
    createIndex: async (spec: IndexSpec) => {
      calls.push({ collection: name, op: 'createIndex', arg: spec });
      // What MongoDB answers when an operator made an index on expires_at with other options.
      if (indexFails)
        throw Object.assign(new Error('Index already exists with different options'), { code: 85 });
    },
    insertOne: async (doc: unknown) => {
      calls.push({ collection: name, op: 'insertOne', arg: doc });
    },
    deleteMany: async (filter: unknown) => {
      calls.push({ collection: name, op: 'deleteMany', arg: filter });
      return 0;
    },
    deleteOne: async () => 0,
  });
  const rt = {
    config: { baseUrl: 'http://127.0.0.1:42400' },
    clock: new FixedClock(new Date('2026-11-28T07:00:00.000Z')),
    docs: { kind: 'mongodb', collection },
    logger: { warn: (...args: unknown[]) => logged.push(args) },
  } as unknown as Runtime;
  return { rt, calls, logged };
}

const ctx = () => ({ get: () => '', append: () => undefined }) as unknown as Context;
const user = { user_id: 'usr_1', email: 'a@example.com', password_hash: null };

test('the expires_at index exists before a session is stored, and is asked for once a runtime', async () => {
  const { rt, calls } = fakeRuntime();
  for (let i = 0; i < 100; i++) await startSignedInSession(rt, ctx(), null, user);
  const indexes = calls.filter((c) => c.op === 'createIndex');
  assert.equal(
    indexes.map((c) => [c.collection, (c.arg as IndexSpec).keys]),
    [[SESSIONS, { expires_at: 1 }]],
  );
  const firstIndex = calls.findIndex((c) => c.op === 'createIndex');
  const firstInsert = calls.findIndex((c) => c.op === 'insertOne');
  assert.ok(firstIndex < firstInsert, 'made before the first session');
  assert.ok(
    calls.some((c) => c.op === 'deleteMany'),
    'the 100th sign-in sweeps',
  );
});

test("an index MongoDB refuses (an operator's own on expires_at) fails no sign-in, and is logged once", async () => {
  const { rt, calls, logged } = fakeRuntime(true);
  for (let i = 0; i < 3; i++) await startSignedInSession(rt, ctx(), null, user);
  assert.is(calls.filter((c) => c.op === 'insertOne').length, 3);
  assert.is(logged.length, 1);
});

test('the index has its own name', async () => {
  const { rt, calls } = fakeRuntime();
  await startSignedInSession(rt, ctx(), null, user);
  const index = calls.find((c) => c.op === 'createIndex')?.arg as IndexSpec;
  assert.is(index.name, 'web_sessions_sweep');
});

test.run();
