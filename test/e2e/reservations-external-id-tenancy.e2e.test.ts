// A reservation external_id is unique within its restaurant, whatever the restaurants' ids: ids are
// free text, and `rest_demo` with `a-1` and `rest_demo-a` with `1` once named one claim stream, so the
// second restaurant's partner was refused with 409 for an external_id it had never used.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  EXTERNAL_ID_CLAIM_PREFIX,
  externalIdClaimStream,
  legacyExternalIdClaimStream,
} from '../../commands/reservations/events';
import {
  create,
  dinnerShift,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';
import { demoBootstrap } from '../helpers/service';

const DASHED = 'rest_demo-a';
const DASHED_TOKEN = 'couvert_pk_res_dashed_0000000000000000000007';

const t = suite<{ svc: ReservationService }>('reservations: external_id claims per restaurant');

t.before(async (ctx) => {
  const base = reservationBootstrap();
  const dashed = demoBootstrap(
    {
      id: DASHED,
      slug: 'dashed',
      name: 'Dashed',
      tables: [{ id: 'tbl_d', name: 'D', room_id: null, min_pax: 1, max_pax: 4 }],
      shifts: [dinnerShift],
    },
    [{ id: 'key_dashed', token: DASHED_TOKEN, scopes: ['RESERVATIONS_READ', 'RESERVATIONS_WRITE'] }],
  );
  ctx.svc = await startReservationService({
    bootstrap: { restaurants: [...base.restaurants, ...dashed.restaurants] },
  });
});
t.after(async ({ svc }) => svc.close());

const total = async (svc: ReservationService, token: string, externalId: string) =>
  (await svc.api('GET', `/reservations?external_id=${encodeURIComponent(externalId)}`, { token })).body
    .pagination.total;

t('the stream names of two restaurants whose ids only differ after a "-" never meet', () => {
  assert.is.not(externalIdClaimStream('rest_demo', 'a-1'), externalIdClaimStream(DASHED, '1'));
  // An id without "-" or "%" keeps the name it always had: its claims need no migration.
  assert.is(externalIdClaimStream('rest_demo', 'a-1'), `${EXTERNAL_ID_CLAIM_PREFIX}rest_demo-a-1`);
  assert.is(legacyExternalIdClaimStream('rest_demo', 'a-1'), null);
  assert.is(legacyExternalIdClaimStream(DASHED, '1'), `${EXTERNAL_ID_CLAIM_PREFIX}rest_demo-a-1`);
});

t(
  'rest_demo books external_id "a-1", rest_demo-a books "1": both are created, each sees its own',
  async ({ svc }) => {
    const first = await create(svc, { external_id: 'a-1' });
    assert.is(first.status, 201, JSON.stringify(first.body));
    const second = await create(svc, { external_id: '1' }, DASHED_TOKEN);
    assert.is(second.status, 201, JSON.stringify(second.body));
    assert.is(await total(svc, TOKENS.full, 'a-1'), 1);
    assert.is(await total(svc, DASHED_TOKEN, '1'), 1);
    // Within one restaurant the value stays unique.
    const again = await create(svc, { external_id: '1' }, DASHED_TOKEN);
    assert.is(again.status, 409);
    assert.is(again.body.error.code, 'RESOURCE_CONFLICT');
  },
);

t('a claim written under the former name by this restaurant still holds its value', async ({ svc }) => {
  const legacy = legacyExternalIdClaimStream(DASHED, 'old-9') as string;
  await svc.rt.events.append(
    legacy,
    [
      {
        type: 'Claimed',
        data: { owner: 'res_before_escaping', at: '2026-06-01T10:00:00.000Z' },
        metadata: { restaurant_id: DASHED },
      },
    ],
    'no_stream',
  );
  const res = await create(svc, { external_id: 'old-9' }, DASHED_TOKEN);
  assert.is(res.status, 409, JSON.stringify(res.body));
  // Another restaurant's claim under a former name is not this restaurant's.
  await svc.rt.events.append(
    legacyExternalIdClaimStream(DASHED, 'old-10') as string,
    [
      {
        type: 'Claimed',
        data: { owner: 'res_of_rest_demo', at: '2026-06-01T10:00:00.000Z' },
        metadata: { restaurant_id: 'rest_demo' },
      },
    ],
    'no_stream',
  );
  const mine = await create(
    svc,
    { external_id: 'old-10', start_at: '2026-06-04T19:00:00+02:00' },
    DASHED_TOKEN,
  );
  assert.is(mine.status, 201, JSON.stringify(mine.body));
});

t.run();
