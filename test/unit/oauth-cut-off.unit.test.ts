// An application's cut-off (`applications disable --disconnect`) bars what it was given before it:
// the pure rule on positions, and its form in the api_keys read model (each token issued before the
// cut-off marked `cut_off_at`, which authentication refuses), property-tested over random histories of
// tokens, API keys, disablings with and without --disconnect and enablings, against a fold of the rule,
// and applied again from any point (a projector restarting after its last checkpoint) unchanged.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cutOffBars } from '../../commands/oauth/cut-off';
import { API_KEYS, type ApiKeyDoc, apiKeysProjection } from '../../projections/api-keys';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { RecordedEvent } from '../../src/ports/event-store';

const t = suite('OAuth: an application’s cut-off');

t('cutOffBars: issued before the cut-off only; no position, nothing barred', () => {
  assert.is(cutOffBars(4n, 5n), true);
  assert.is(cutOffBars(5n, 5n), false, 'the cut-off itself is no token');
  assert.is(cutOffBars(6n, 5n), false, 'issued after (an enable since): works');
  assert.is(cutOffBars(4n, null), false, 'never cut off');
  assert.is(cutOffBars(null, 5n), false);
  assert.is(cutOffBars(9n, 10n), true, 'numbers, not text');
});

const APPS = ['app_a', 'app_b'] as const;

type Step =
  | { kind: 'token'; app: (typeof APPS)[number] }
  | { kind: 'key' }
  | { kind: 'disable'; app: (typeof APPS)[number]; disconnect: boolean }
  | { kind: 'enable'; app: (typeof APPS)[number] };

const app = fc.constantFrom(...APPS);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('token' as const), app }),
  fc.record({ kind: fc.constant('key' as const) }),
  fc.record({ kind: fc.constant('disable' as const), app, disconnect: fc.boolean() }),
  fc.record({ kind: fc.constant('enable' as const), app }),
);
// Gaps between positions wide enough that they cross decimal widths (9 → 10…): the read model compares
// them as text.
const history = fc.array(fc.tuple(step, fc.bigInt({ min: 1n, max: 10n ** 12n })), { maxLength: 30 });

const at = (i: number) => new Date(Date.UTC(2026, 10, 28, 9, 0, i)).toISOString();

function events(steps: [Step, bigint][]): RecordedEvent[] {
  let position = 0n;
  return steps.map(([s, gap], i) => {
    position += gap;
    const base = { id: `e${i}`, metadata: {}, created: at(i), stream: 's', revision: 0, position };
    switch (s.kind) {
      case 'token':
      case 'key': {
        const oauth = s.kind === 'token';
        return {
          ...base,
          type: 'ApiKeyCreated',
          data: {
            key_id: `key_${i}`,
            restaurant_id: 'rest_a',
            name: `key ${i}`,
            token_hash: `hash_${i}`,
            token_hint: 'abcd',
            scopes: ['CATALOG_READ'],
            type: oauth ? 'OAUTH' : 'API_KEY',
            application: oauth ? { id: s.app, name: s.app } : null,
            at: at(i),
          },
        };
      }
      case 'disable':
        return {
          ...base,
          type: 'OAuthApplicationDisabled',
          data: s.disconnect
            ? { client_id: s.app, at: at(i), disconnect: true }
            : { client_id: s.app, at: at(i) },
        };
      default:
        return { ...base, type: 'OAuthApplicationEnabled', data: { client_id: s.app, at: at(i) } };
    }
  });
}

/** From scratch, by the rule: each key's `cut_off_at`, the time of the first cut-off that bars it. */
function expected(log: RecordedEvent[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const e of log) {
    if (e.type !== 'ApiKeyCreated') continue;
    const d = e.data as { key_id: string; application: { id: string } | null };
    const barring = log.find(
      (c) =>
        c.type === 'OAuthApplicationDisabled' &&
        (c.data as { disconnect?: boolean }).disconnect === true &&
        d.application !== null &&
        (c.data as { client_id: string }).client_id === d.application.id &&
        cutOffBars(e.position, c.position),
    );
    out[d.key_id] = barring ? ((barring.data as { at: string }).at as string) : null;
  }
  return out;
}

async function built(log: RecordedEvent[], againFrom?: number) {
  const docs = new EmbeddedDocumentStore();
  await apiKeysProjection.setup?.(docs);
  for (const e of log)
    if (apiKeysProjection.eventTypes.includes(e.type)) await apiKeysProjection.apply(e, docs);
  // A restart after the last checkpoint: the events from there are applied again, in order.
  if (againFrom !== undefined)
    for (const e of log.slice(againFrom))
      if (apiKeysProjection.eventTypes.includes(e.type)) await apiKeysProjection.apply(e, docs);
  const keys = await docs.collection<ApiKeyDoc>(API_KEYS).find({}, { sort: { _id: 1 } });
  return Object.fromEntries(keys.map((k) => [k._id, k.cut_off_at ?? null]));
}

t('api_keys marks exactly the tokens a cut-off bars; applied again from any point, the same', async () => {
  await fc.assert(
    fc.asyncProperty(history, fc.nat(), async (steps, from) => {
      const log = events(steps);
      const want = expected(log);
      assert.equal(await built(log), want);
      assert.equal(await built(log, log.length ? from % log.length : 0), want);
    }),
    { numRuns: 200 },
  );
});

t('an API key is no application’s: never marked', async () => {
  const log = events([
    [{ kind: 'key' }, 1n],
    [{ kind: 'token', app: 'app_a' }, 1n],
    [{ kind: 'disable', app: 'app_a', disconnect: true }, 1n],
  ]);
  assert.equal(await built(log), { key_0: null, key_1: at(2) });
});

t(
  'a plain disable marks nothing; a token issued after enable is not marked; a later cut-off marks it',
  async () => {
    const log = events([
      [{ kind: 'token', app: 'app_a' }, 1n],
      [{ kind: 'disable', app: 'app_a', disconnect: false }, 1n],
      [{ kind: 'enable', app: 'app_a' }, 1n],
      [{ kind: 'disable', app: 'app_a', disconnect: true }, 1n],
      [{ kind: 'enable', app: 'app_a' }, 1n],
      [{ kind: 'token', app: 'app_a' }, 1n],
      [{ kind: 'token', app: 'app_b' }, 1n],
    ]);
    assert.equal(await built(log), { key_0: at(3), key_5: null, key_6: null });
    const again = events([
      ...([
        [{ kind: 'token', app: 'app_a' }, 1n],
        [{ kind: 'disable', app: 'app_a', disconnect: true }, 1n],
        [{ kind: 'token', app: 'app_a' }, 1n],
        [{ kind: 'disable', app: 'app_a', disconnect: true }, 1n],
      ] as [Step, bigint][]),
    ]);
    assert.equal(await built(again), { key_0: at(1), key_2: at(3) }, 'the first cut-off that barred it');
  },
);

t.run();
