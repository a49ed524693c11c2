// Scaled out, a request's credential is read from MongoDB each time (no cache: another process writes
// the read models). A token seen before has its restaurant read beside its key, not after it: one
// round trip to the store instead of two, and both read afresh.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { API_KEYS } from '../../projections/api-keys';
import { RESTAURANTS } from '../../projections/restaurants';
import { sha256 } from '../../src/core/ids';
import { authenticate } from '../../src/http/auth';
import type { AuthContext } from '../../src/http/route';
import type { Runtime } from '../../src/runtime';

const test = suite('auth (scaled out): reads');
const TOKEN = 'couvert_pk_scaled_reads_000000000000000000001';

interface World {
  rt: Runtime;
  /** Collections in the order their findOne was called. */
  calls: string[];
  data: Record<string, Map<string, Record<string, unknown>>>;
  /** While set, the key lookup waits for it. */
  holdKeys: Promise<void> | null;
}

function world(): World {
  const restaurant = (id: string) => ({ _id: id, name: id, api_option: true, suspended: false });
  const w: World = {
    calls: [],
    holdKeys: null,
    data: {
      [API_KEYS]: new Map([
        [
          sha256(TOKEN),
          {
            _id: 'key_1',
            restaurant_id: 'r1',
            token_hash: sha256(TOKEN),
            scopes: ['CATALOG_READ'],
            type: 'API_KEY',
            application: null,
            revoked_at: null,
          },
        ],
      ]),
      [RESTAURANTS]: new Map([
        ['r1', restaurant('r1')],
        ['r2', restaurant('r2')],
      ]),
    },
    rt: undefined as unknown as Runtime,
  };
  const docs = {
    kind: 'mongodb',
    collection: (name: string) => ({
      async findOne(filter: Record<string, unknown>) {
        w.calls.push(name);
        if (name === API_KEYS) {
          if (w.holdKeys) await w.holdKeys;
          return structuredClone(w.data[name]?.get(filter.token_hash as string) ?? null);
        }
        return structuredClone(w.data[name]?.get(filter._id as string) ?? null);
      },
    }),
  };
  w.rt = { config: { store: 'eventstoredb' }, docs } as unknown as Runtime;
  return w;
}

const ask = (w: World) => Promise.resolve(authenticate(w.rt, `Bearer ${TOKEN}`, { kind: 'token' }));
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

test('a token seen before: its restaurant is read while its key is', async () => {
  const w = world();
  assert.is((await ask(w)).restaurant._id, 'r1');
  assert.equal(w.calls, [API_KEYS, RESTAURANTS], 'first time: the key, then its restaurant');
  w.calls = [];
  let release = () => {};
  w.holdKeys = new Promise<void>((r) => {
    release = r;
  });
  const second = ask(w);
  await turns();
  assert.equal(w.calls.slice().sort(), [API_KEYS, RESTAURANTS].sort(), 'both asked before the key answered');
  release();
  const auth: AuthContext = await second;
  assert.is(auth.restaurant._id, 'r1');
  assert.is(auth.credential._id, 'key_1');
  assert.equal(w.calls.length, 2, 'no third read');
});

test('every request reads afresh: a revocation or a suspension is seen at once', async () => {
  const w = world();
  await ask(w);
  (w.data[RESTAURANTS]?.get('r1') as { suspended: boolean }).suspended = true;
  const suspended = await ask(w).then(
    () => null,
    (e: { status?: number; code?: string }) => e,
  );
  assert.is(suspended?.code, 'RESTAURANT_SUSPENDED');
  (w.data[RESTAURANTS]?.get('r1') as { suspended: boolean }).suspended = false;
  (w.data[API_KEYS]?.get(sha256(TOKEN)) as { revoked_at: string | null }).revoked_at = '2026-11-28T00:00:00Z';
  const revoked = await ask(w).then(
    () => null,
    (e: { status?: number }) => e,
  );
  assert.is(revoked?.status, 401);
});

test('the remembered restaurant is used only while the key names it', async () => {
  const w = world();
  await ask(w);
  (w.data[API_KEYS]?.get(sha256(TOKEN)) as { restaurant_id: string }).restaurant_id = 'r2';
  w.calls = [];
  assert.is((await ask(w)).restaurant._id, 'r2');
  assert.is(w.calls.filter((c) => c === RESTAURANTS).length, 2, 'the guess, then the key’s own');
  w.calls = [];
  assert.is((await ask(w)).restaurant._id, 'r2');
  assert.is(w.calls.length, 2, 'remembered anew');
});

// `applications disable --disconnect` marks the application's tokens in the key's own document
// (projections/api-keys.ts) before its sweep revokes them: scaled out, the refusal costs no read more.
test('an OAuth token its application cut off is refused as a revoked one, with no read more', async () => {
  const w = world();
  const key = w.data[API_KEYS]?.get(sha256(TOKEN)) as Record<string, unknown>;
  Object.assign(key, { type: 'OAUTH', application: { id: 'app_x', name: 'X' }, cut_off_at: null });
  assert.is((await ask(w)).restaurant._id, 'r1', 'not cut off: works');
  key.cut_off_at = '2026-11-28T09:00:00.000Z';
  w.calls = [];
  const refused = await ask(w).then(
    () => null,
    (e: { status?: number; code?: string; message?: string }) => e,
  );
  assert.is(refused?.status, 401);
  assert.is(refused?.code, 'INVALID_AUTHENTICATION');
  assert.match(refused?.message ?? '', /^The token is invalid, revoked or disconnected: /);
  assert.equal(w.calls.slice().sort(), [API_KEYS, RESTAURANTS].sort(), 'the reads of any request, no more');
});

test.run();
