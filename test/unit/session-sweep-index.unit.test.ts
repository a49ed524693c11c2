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

function fakeRuntime() {
  const calls: { collection: string; op: string; arg: unknown }[] = [];
  const collection = (name: string) => ({
    name,
    createIndex: async (spec: IndexSpec) => {
      calls.push({ collection: name, op: 'createIndex', arg: spec });
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
  } as unknown as Runtime;
  return { rt, calls };
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

test.run();
