// Parallel identical POST /customers within one process (upsertCustomer): one customer, not one per
// call. Matching reads the read model, so the calls sharing a key run one after the other, each once
// the read models show the write before it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  heldMatchKey,
  matchKeyHolds,
  type UpsertDeps,
  upsertCustomer,
} from '../../commands/customers/upsert';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { matchKeys } from '../../queries/customers';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld; deps: UpsertDeps }>('parallel POST /customers');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
  ctx.deps = {
    ...ctx.w,
    settle: async () => {
      await ctx.w.settle();
    },
  };
});

const live = (w: CustomerWorld) =>
  w.docs.collection<CustomerDoc>(CUSTOMERS).find({ restaurant_id: 'rest_a' });

for (const onMatch of ['return_existing', 'update'] as const)
  t(`ten identical calls at once (${onMatch}): one created, the others find it`, async ({ w, deps }) => {
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        upsertCustomer(deps, w.restaurant, { name: `N${i}`, email: 'Same@Example.com' }, onMatch, w.meta),
      ),
    );
    assert.is(new Set(outcomes.map((o) => o.customerId)).size, 1);
    assert.equal(
      outcomes.map((o) => o.result).sort(),
      ['created', ...Array(9).fill(onMatch === 'update' ? 'updated' : 'matched')].sort(),
    );
    await w.settle();
    assert.is((await live(w)).length, 1);
  });

t(
  'calls sharing a key by different fields (phone spellings, email) still make one customer',
  async ({ w, deps }) => {
    const bodies = [
      { name: 'A', phone_number: '+33 6 11 22 33 44' },
      { name: 'B', phone_number: '06 11 22 33 44', email: 'b@example.com' },
      { name: 'C', email: 'b@example.com' },
      { name: 'D', phone_number: '0611223344' },
    ];
    const outcomes = await Promise.all(
      bodies.map((b) => upsertCustomer(deps, w.restaurant, b, 'update', w.meta)),
    );
    await w.settle();
    // B shares the phone with A and D and the email with C: every call ends on the first created (B
    // writes its email onto it, which C then finds).
    assert.is(new Set(outcomes.map((o) => o.customerId)).size, 1);
    assert.is((await live(w)).length, 1);
  },
);

t('create_new is never held back nor matched: one customer per call', async ({ w, deps }) => {
  await Promise.all(
    Array.from({ length: 3 }, () =>
      upsertCustomer(deps, w.restaurant, { name: 'X', email: 'x@example.com' }, 'create_new', w.meta),
    ),
  );
  await w.settle();
  assert.is((await live(w)).length, 3);
});

t(
  'a key held and never let go (a stalled import) is waited for a bounded time, then the call goes ahead',
  async ({ w, deps }) => {
    const input = { name: 'Guest', email: 'stalled@example.com' };
    const keys = matchKeys(w.restaurant, input, ['email']).map((k) => heldMatchKey(w.restaurant._id, k));
    assert.is(keys.length, 1);
    // An import's slice holding the key, whose thread hung: nobody lets it go.
    assert.is(matchKeyHolds.take(keys, true), null);
    const warnings: string[] = [];
    try {
      const outcome = await upsertCustomer(
        {
          ...deps,
          config: { readYourWritesTimeoutMs: 10 },
          logger: { warn: (_obj: unknown, msg?: string) => warnings.push(String(msg)) },
        },
        w.restaurant,
        input,
        'update',
        w.meta,
      );
      assert.is(outcome.result, 'created');
      assert.is(warnings.length, 1);
      assert.match(warnings[0] as string, /without its match keys/);
      // The import's key is still the import's: the call that gave up did not let it go.
      assert.is(matchKeyHolds.size, 1);
    } finally {
      matchKeyHolds.release(keys);
    }
    assert.is(matchKeyHolds.size, 0);
  },
);

t.run();
