// Creating an API key through its command: the append that makes it is recognised on a retry and never
// confused with a different key of the same id.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyStream } from '../../commands/credentials/events';
import { createApiKey } from '../../commands/credentials/handler';
import { createRestaurant } from '../../commands/restaurants/handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { systemClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { restaurantProfile } from '../helpers/restaurants';

async function withRestaurant() {
  const deps = { events: new MemoryEventStore(), clock: systemClock };
  await createRestaurant(deps, 'rest_k', restaurantProfile('k'), operatorMeta());
  return deps;
}

const input = (token: string) => ({
  restaurantId: 'rest_k',
  keyId: 'key_fixed',
  name: 'fixed',
  scopes: ['CATALOG_READ' as const],
  token,
});
const A = `couvert_pk_${'a'.repeat(43)}`;
const B = `couvert_pk_${'b'.repeat(43)}`;

test('two concurrent creates of one key id with different tokens: one wins, the other is a 409', async () => {
  const deps = await withRestaurant();
  const outcomes = await Promise.allSettled([
    createApiKey(deps, input(A), operatorMeta()),
    createApiKey(deps, input(B), operatorMeta()),
  ]);
  const won = outcomes.filter((o) => o.status === 'fulfilled');
  const lost = outcomes.filter((o) => o.status === 'rejected') as PromiseRejectedResult[];
  assert.is(won.length, 1, 'exactly one create succeeds');
  const reason = lost[0]?.reason as ApiError;
  assert.instance(reason, ApiError);
  assert.is(reason.status, 409);
  const created = (await deps.events.readStream(apiKeyStream('key_fixed'))).filter(
    (e) => e.type === 'ApiKeyCreated',
  );
  assert.is(created.length, 1);
});

test('the same create again (a retry, or a bootstrap applied twice) appends nothing and succeeds', async () => {
  const deps = await withRestaurant();
  await createApiKey(deps, input(A), operatorMeta());
  const again = await createApiKey(deps, input(A), operatorMeta());
  assert.is(again.token, A);
  assert.is((await deps.events.readStream(apiKeyStream('key_fixed'))).length, 1);
});

test.run();
