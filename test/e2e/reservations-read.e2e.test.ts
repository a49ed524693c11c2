import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeCustomers } from '../../commands/customers/merge';
import { operatorMeta } from '../../src/core/command-meta';
import { OpenApiChecker } from '../helpers/openapi';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import type { TestService } from '../helpers/service';

const t = suite<{
  svc: ReservationService;
  openapi: OpenApiChecker;
  ids: string[];
  customerId: string;
  otherId: string;
}>('reservations: read');

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
  ctx.ids = [];
  // 12 reservations over 4 days (3 a day), the first of each day for one customer.
  for (const day of ['10', '11', '12', '13'])
    for (const [i, hhmm] of ['19:00', '20:00', '21:00'].entries()) {
      const res = await create(ctx.svc, {
        start_at: at(day, hhmm),
        external_id: `r-${day}-${hhmm}`,
        ...(i === 0
          ? { customer: { name: 'Grace Hopper', email: 'grace@example.com', phone_number: '+33622334455' } }
          : {}),
      });
      assert.is(res.status, 201, res.text);
      ctx.ids.push(res.body.data.id);
      if (i === 0) ctx.customerId = res.body.data.customer.id;
    }
  ctx.otherId = (await create(ctx.svc, { start_at: at('10', '19:00') }, TOKENS.other)).body.data.id;
});
t.after(async ({ svc }) => svc.close());

const get = (svc: TestService, path: string, token = TOKENS.full) => svc.api('GET', path, { token });

t('pages start at 1, default to 25, and carry totals', async ({ svc, openapi, ids }) => {
  const all = await get(svc, '/reservations');
  assert.is(all.status, 200);
  openapi.check('GET', '/api/partner/v1/reservations', all);
  assert.equal(all.body.pagination, { page: 1, per_page: 25, total: 12, total_pages: 1, has_more: false });
  // Ordered by start: the creation order here.
  assert.equal(
    all.body.data.map((r: { id: string }) => r.id),
    ids,
  );
  const p2 = await get(svc, '/reservations?page=2&per_page=5');
  assert.equal(p2.body.pagination, { page: 2, per_page: 5, total: 12, total_pages: 3, has_more: true });
  assert.equal(
    p2.body.data.map((r: { id: string }) => r.id),
    ids.slice(5, 10),
  );
  const last = await get(svc, '/reservations?page=3&per_page=5');
  assert.is(last.body.data.length, 2);
  assert.is(last.body.pagination.has_more, false);
  const beyond = await get(svc, '/reservations?page=9&per_page=5');
  assert.equal(beyond.body.data, []);
  for (const bad of [
    'page=0',
    'per_page=101',
    'per_page=0',
    'page=x',
    'status=NOPE',
    'start_at_from=yesterday',
    'foo=1',
  ]) {
    const res = await get(svc, `/reservations?${bad}`);
    assert.is(res.status, 400, bad);
    assert.is(res.body.error.code, 'VALIDATION_ERROR');
  }
  assert.is((await get(svc, '/reservations?per_page=100')).status, 200);
});

t(
  'filters: external_id, customer_id, status (one or several), start window, updated_since',
  async ({ svc, ids, customerId }) => {
    const byExternal = await get(svc, '/reservations?external_id=r-11-20:00');
    assert.equal(
      byExternal.body.data.map((r: { id: string }) => r.id),
      [ids[4]],
    );
    const byCustomer = await get(svc, `/reservations?customer_id=${customerId}`);
    assert.equal(
      byCustomer.body.data.map((r: { id: string }) => r.id),
      [ids[0], ids[3], ids[6], ids[9]],
    );
    const canceled = await svc.api('POST', `/reservations/${ids[1]}/cancel`, {
      token: TOKENS.full,
      body: {},
    });
    assert.is(canceled.status, 200);
    const onlyCanceled = await get(svc, '/reservations?status=CANCELED_BY_RESTAURANT');
    assert.equal(
      onlyCanceled.body.data.map((r: { id: string }) => r.id),
      [ids[1]],
    );
    const both = await get(svc, '/reservations?status=CANCELED_BY_RESTAURANT,CONFIRMED');
    assert.is(both.body.pagination.total, 12);
    // Bounds are inclusive and read with their offset: 19:00 in Paris is 17:00Z.
    const window = await get(
      svc,
      '/reservations?start_at_from=2026-06-11T17:00:00Z&start_at_to=2026-06-12T19:00:00%2B02:00',
    );
    assert.equal(
      window.body.data.map((r: { id: string }) => r.id),
      ids.slice(3, 7),
    );
    // The cancel is the only change after creation time.
    const since = await get(
      svc,
      `/reservations?updated_since=${encodeURIComponent(canceled.body.data.updated_at)}`,
    );
    assert.is(since.body.pagination.total, 12, 'all were written at the same fixed instant');
    svc.clock.advance(60);
    const later = new Date(svc.clock.now().getTime()).toISOString();
    await svc.api('PATCH', `/reservations/${ids[2]}`, {
      token: TOKENS.full,
      body: { custom_message: 'late note' },
    });
    const changed = await get(svc, `/reservations?updated_since=${encodeURIComponent(later)}`);
    assert.equal(
      changed.body.data.map((r: { id: string }) => r.id),
      [ids[2]],
    );
  },
);

t(
  'a start window finds a seating after midnight that belongs to the previous service day',
  async ({ svc }) => {
    const late = await create(svc, { start_at: '2026-06-21T00:30:00+02:00' });
    assert.is(late.status, 201, late.text);
    assert.is(late.body.data.shift.id, 'shift_late');
    // The 21st's stream holds no seating: only the note that one of the 20th lasts into it.
    assert.equal(
      (await svc.rt.events.readStream('capacity-rest_demo-2026-06-21')).map((e) => e.type),
      ['NightSeatingNoted'],
    );
    assert.is((await svc.rt.events.readStream('capacity-rest_demo-2026-06-20')).length, 1);
    const found = await get(
      svc,
      '/reservations?start_at_from=2026-06-21T00:00:00%2B02:00&start_at_to=2026-06-21T01:00:00%2B02:00',
    );
    assert.equal(
      found.body.data.map((r: { id: string }) => r.id),
      [late.body.data.id],
    );
    const before = await get(
      svc,
      '/reservations?start_at_from=2026-06-20T20:00:00%2B02:00&start_at_to=2026-06-21T00:29:59%2B02:00',
    );
    assert.equal(before.body.data, []);
    await svc.api('POST', `/reservations/${late.body.data.id}/cancel`, { token: TOKENS.full, body: {} });
  },
);

t(
  "after a customer merge, the survivor's customer_id lists the absorbed customer's reservations too",
  async ({ svc }) => {
    const a = (
      await create(svc, {
        start_at: '2026-06-22T19:00:00+02:00',
        customer: { name: 'Ann Dup', email: 'ann1@example.com' },
      })
    ).body.data;
    const b = (
      await create(svc, {
        start_at: '2026-06-22T20:00:00+02:00',
        customer: { name: 'Ann Dup', email: 'ann2@example.com' },
      })
    ).body.data;
    await svc.rt.settle(
      (await mergeCustomers(svc.rt, a.customer.id, b.customer.id, operatorMeta('t'))).position,
    );
    const list = await get(svc, `/reservations?customer_id=${b.customer.id}`);
    assert.equal(
      list.body.data.map((r: { id: string }) => r.id),
      [a.id, b.id],
    );
    assert.is(list.body.data[0].customer.id, b.customer.id);
  },
);

t(
  'the unfiltered list (walked day by day) pages exactly like a filtered one, also after a move to another day',
  async ({ svc, ids }) => {
    // Move the first reservation of the 10th to the 13th: the per-day counts must follow.
    const moved = await svc.api('PATCH', `/reservations/${ids[0]}`, {
      token: TOKENS.full,
      body: { start_at: '2026-06-13T22:00:00+02:00' },
    });
    assert.is(moved.status, 200, moved.text);
    const everyStatus =
      'status=' + ['CONFIRMED', 'CANCELED_BY_RESTAURANT', 'PENDING', 'PENDING_PAYMENT'].join(',');
    const walk = async (query: string, perPage: number) => {
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const res = await get(svc, `/reservations?per_page=${perPage}&page=${page}${query}`);
        seen.push(...res.body.data.map((r: { id: string }) => r.id));
        if (!res.body.pagination.has_more) return { seen, total: res.body.pagination.total };
      }
    };
    for (const perPage of [1, 2, 3, 5, 7, 25]) {
      const byDays = await walk('', perPage);
      const byFilter = await walk(`&${everyStatus}`, perPage);
      assert.equal(byDays, byFilter, `per_page=${perPage}`);
      assert.is(new Set(byDays.seen).size, byDays.total);
    }
    const all = (await walk('', 100)).seen;
    // Now the last of the 13th, right after the 21:00 one.
    assert.is(all.indexOf(ids[0] as string), all.indexOf(ids[11] as string) + 1);
  },
);

t('date-time filters past year 9999 in UTC match nothing, before year 0000 everything', async ({ svc }) => {
  // 9999-12-31T23:59:59-14:00 is an instant of year 10000, whose UTC text ("+010000-…") sorted before
  // every stored instant: every reservation was returned.
  const late = encodeURIComponent('9999-12-31T23:59:59-14:00');
  for (const filter of [`updated_since=${late}`, `start_at_from=${late}`]) {
    const page = await get(svc, `/reservations?${filter}`);
    assert.is(page.status, 200, page.text);
    assert.is(page.body.pagination.total, 0, filter);
  }
  const early = encodeURIComponent('0000-01-01T00:00:00+14:00');
  const all = (await get(svc, '/reservations')).body.pagination.total;
  assert.ok(all >= 12);
  assert.is((await get(svc, `/reservations?updated_since=${early}`)).body.pagination.total, all);
  assert.is((await get(svc, `/reservations?start_at_to=${early}`)).body.pagination.total, 0);
});

t('GET /reservations/{id} answers the same representation as the list', async ({ svc, openapi, ids }) => {
  const one = await get(svc, `/reservations/${ids[3]}`);
  assert.is(one.status, 200);
  openapi.check('GET', '/api/partner/v1/reservations/{id}', one);
  const inList = (await get(svc, '/reservations?external_id=r-11-19:00')).body.data[0];
  assert.equal(one.body.data, inList);
  const missing = await get(svc, '/reservations/res_nope');
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'RESOURCE_NOT_FOUND');
  openapi.check('GET', '/api/partner/v1/reservations/{id}', missing);
});

t(
  'customer contact fields only with RESERVATIONS_READ_SENSITIVE, and sensitive_data_included says so',
  async ({ svc, ids }) => {
    const withScope = (await get(svc, `/reservations/${ids[0]}`)).body.data;
    assert.is(withScope.sensitive_data_included, true);
    assert.is(withScope.customer.email, 'grace@example.com');
    assert.is(withScope.customer.phone_number, '+33622334455');
    const without = (await get(svc, `/reservations/${ids[0]}`, TOKENS.noSensitive)).body.data;
    assert.is(without.sensitive_data_included, false);
    assert.equal(Object.keys(without.customer).sort(), ['id', 'lang', 'name']);
    assert.is(without.customer.name, 'Grace Hopper');
    const list = (await get(svc, '/reservations', TOKENS.noSensitive)).body.data;
    assert.ok(list.every((r: { sensitive_data_included: boolean }) => r.sensitive_data_included === false));
    assert.ok(list.every((r: { customer: object | null }) => !r.customer || !('email' in r.customer)));
    // The write routes answer with the same rule.
    const created = await create(
      svc,
      { start_at: at('14', '19:00'), customer: { id: withScope.customer.id } },
      TOKENS.noSensitive,
    );
    assert.is(created.body.data.sensitive_data_included, false);
    assert.not.ok('email' in created.body.data.customer);
  },
);

t(
  "another restaurant's reservation is 404 on every route, never 403, never data",
  async ({ svc, otherId, ids }) => {
    const token = TOKENS.full;
    const answers = [
      await svc.api('GET', `/reservations/${otherId}`, { token }),
      await svc.api('PATCH', `/reservations/${otherId}`, { token, body: { custom_message: 'x' } }),
      await svc.api('POST', `/reservations/${otherId}/cancel`, { token, body: {} }),
    ];
    for (const res of answers) {
      assert.is(res.status, 404, res.text);
      assert.is(res.body.error.code, 'RESOURCE_NOT_FOUND');
    }
    const lists = await get(svc, `/reservations?per_page=100`);
    assert.not.ok(lists.body.data.some((r: { id: string }) => r.id === otherId));
    // And the other way round.
    for (const res of [
      await svc.api('GET', `/reservations/${ids[0]}`, { token: TOKENS.other }),
      await svc.api('PATCH', `/reservations/${ids[0]}`, { token: TOKENS.other, body: { party_size: 3 } }),
      await svc.api('POST', `/reservations/${ids[0]}/cancel`, { token: TOKENS.other, body: {} }),
    ])
      assert.is(res.status, 404);
    // The other restaurant's attempt changed nothing here.
    assert.is((await get(svc, `/reservations/${ids[0]}`)).body.data.status, 'CONFIRMED');
    assert.is((await get(svc, '/reservations', TOKENS.other)).body.pagination.total, 1);
  },
);

t('scopes: reading needs RESERVATIONS_READ', async ({ svc, ids }) => {
  for (const path of ['/reservations', `/reservations/${ids[0]}`]) {
    const res = await get(svc, path, TOKENS.catalogOnly);
    assert.is(res.status, 403);
    assert.is(res.body.error.code, 'INSUFFICIENT_SCOPE');
    assert.is((await get(svc, path, TOKENS.readOnly)).status, 200);
  }
  assert.is((await svc.api('GET', '/reservations')).status, 401);
});

t.run();
