// Creating a restaurant claims its slug: a refused create must leave the slug free.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurant } from '../../commands/restaurants/handler';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { systemClock } from '../../src/core/clock';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { restaurantProfile } from '../helpers/restaurants';

const profile = (slug: string) => restaurantProfile(slug);

test('creating an id that exists, with a new slug: 409, and the new slug stays free for others', async () => {
  const deps = { events: new MemoryEventStore(), clock: systemClock };
  await createRestaurant(deps, 'rest_a', profile('first'), operatorMeta());
  const err = await createRestaurant(deps, 'rest_a', profile('second'), operatorMeta()).then(
    () => null,
    (e) => e,
  );
  assert.instance(err, ApiError);
  assert.is(err.status, 409);
  await createRestaurant(deps, 'rest_b', profile('second'), operatorMeta());
});

test.run();
