// Issue 18 (points 1 and 2) over HTTP: dates and times that do not exist are refused on every route
// instead of rolling over; lengths count characters; blank names and impossible phone numbers are
// refused; party_size and numeric query parameters have one documented maximum each. A refused
// request writes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { MAX_PAGE, PARTY_SIZE } from '../../src/core/limits';
import { dinnerShift } from '../helpers/reservations';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const TOKEN = 'couvert_pk_inputs_000000000000000000000000001';
const NOW = '2027-11-01T08:00:00Z';

const bootstrap = demoBootstrap(
  {
    rooms: [{ id: 'room_main', name: 'Main room' }],
    tables: [
      { id: 'tbl_1', name: '1', room_id: 'room_main', min_pax: 1, max_pax: 4 },
      { id: 'tbl_2', name: '2', room_id: 'room_main', min_pax: 1, max_pax: 4 },
    ],
    shifts: [dinnerShift],
    customer_fields: [{ id: 'cf_birthday', name: 'Birthday', type: 'DATE' }],
  },
  [
    {
      id: 'key_inputs',
      token: TOKEN,
      scopes: [
        'AVAILABILITY_READ',
        'RESERVATIONS_READ',
        'RESERVATIONS_READ_SENSITIVE',
        'RESERVATIONS_WRITE',
        'RESERVATIONS_FORCE_INSERT',
        'CUSTOMERS_READ',
        'CUSTOMERS_WRITE',
      ],
    },
  ],
);

const t = suite<{ svc: TestService }>('inputs: dates, lengths, names, phones, numbers');

t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap, clock: new FixedClock(NOW) });
});
t.after(async ({ svc }) => svc.close());

const call = (svc: TestService, method: string, path: string, body?: unknown) =>
  svc.api(method, path, { token: TOKEN, ...(body === undefined ? {} : { body }) });
/**
 * A body sent wrong on purpose: not checked against the document before sending (some of these only the
 * server can refuse, such as a phone number no country reads); the answer still is.
 */
const callOdd = (svc: TestService, method: string, path: string, body?: unknown) =>
  svc.api(method, path, { token: TOKEN, ...(body === undefined ? {} : { body }), anyBody: true });

/** The response is 400 VALIDATION_ERROR with an issue on exactly `path`. */
function refused(
  res: { status: number; body: { error?: { code: string; details?: { issues: { path: string }[] } } } },
  path: string,
  why: string,
) {
  assert.is(res.status, 400, `${why}: status ${res.status} ${JSON.stringify(res.body)}`);
  assert.is(res.body.error?.code, 'VALIDATION_ERROR', why);
  const paths = (res.body.error?.details?.issues ?? []).map((i) => i.path);
  assert.ok(paths.includes(path), `${why}: issue paths ${JSON.stringify(paths)} lack ${path}`);
}

const reservationCount = async (svc: TestService) =>
  (await call(svc, 'GET', '/reservations?per_page=100')).body.pagination.total as number;

const customersNamed = async (svc: TestService, name: string) =>
  ((await call(svc, 'GET', '/customers?limit=100')).body.data as { name: string }[]).filter(
    (c) => c.name === name,
  ).length;

t(
  'start_at 2027-11-31 is refused by POST /reservations (nothing booked) and POST /availability/check',
  async ({ svc }) => {
    const before = await reservationCount(svc);
    const bad = await callOdd(svc, 'POST', '/reservations', {
      start_at: '2027-11-31T19:45:00+01:00',
      party_size: 2,
    });
    refused(bad, 'start_at', 'POST /reservations 2027-11-31');
    assert.match(bad.body.error.details.issues[0].message, /no day 31/);
    assert.is(await reservationCount(svc), before, 'nothing was booked');

    refused(
      await callOdd(svc, 'POST', '/availability/check', {
        start_at: '2027-11-31T19:45:00+01:00',
        party_size: 2,
      }),
      'start_at',
      'POST /availability/check 2027-11-31',
    );
    // The real day is untouched by the rule, and reads back as written.
    const check = await call(svc, 'POST', '/availability/check', {
      start_at: '2027-12-01T19:45:00+01:00',
      party_size: 2,
    });
    assert.is(check.status, 200);
    assert.is(check.body.data.slot?.start_at, '2027-12-01T19:45:00+01:00');
  },
);

t(
  'a time that does not exist (24:00, a leap second, hour 25) is refused everywhere a date-time is read',
  async ({ svc }) => {
    for (const at of ['2027-12-01T24:00:00+01:00', '2027-12-01T19:45:60+01:00', '2027-12-01T25:00:00Z'])
      refused(await callOdd(svc, 'POST', '/reservations', { start_at: at, party_size: 2 }), 'start_at', at);
    const created = await call(svc, 'POST', '/reservations', {
      start_at: '2027-12-02T19:00:00+01:00',
      party_size: 2,
    });
    assert.is(created.status, 201, JSON.stringify(created.body));
    refused(
      await callOdd(svc, 'PATCH', `/reservations/${created.body.data.id}`, {
        start_at: '2027-12-02T24:00:00+01:00',
      }),
      'start_at',
      'PATCH start_at 24:00',
    );
    const after = await call(svc, 'GET', `/reservations/${created.body.data.id}`);
    assert.is(after.body.data.start_at, '2027-12-02T19:00:00+01:00', 'the refused patch changed nothing');
  },
);

t('an availability window on 2027-02-30 is refused, not read as 2 March', async ({ svc }) => {
  const q = (from: string, to: string) =>
    `/availability?party_size=2&start_at_from=${encodeURIComponent(from)}&start_at_to=${encodeURIComponent(to)}`;
  refused(
    await callOdd(svc, 'GET', q('2027-02-30T18:00:00+01:00', '2027-03-02T23:00:00+01:00')),
    'start_at_from',
    'start_at_from 2027-02-30',
  );
  refused(
    await callOdd(svc, 'GET', q('2027-02-27T18:00:00+01:00', '2027-02-30T23:00:00+01:00')),
    'start_at_to',
    'start_at_to 2027-02-30',
  );
  assert.is(
    (await call(svc, 'GET', q('2027-12-01T18:00:00+01:00', '2027-12-01T23:00:00+01:00'))).status,
    200,
  );
});

t(
  'a start in year 0000 or 9999, whose calendar the availability engine cannot step through, is 400 (it hung the server)',
  async ({ svc }) => {
    const q = (from: string, to: string) =>
      `/availability?party_size=2&start_at_from=${encodeURIComponent(from)}&start_at_to=${encodeURIComponent(to)}`;
    for (const start of ['9999-12-31T19:00:00+01:00', '0000-01-01T19:00:00+01:00']) {
      refused(
        await callOdd(svc, 'POST', '/availability/check', { start_at: start, party_size: 2 }),
        'start_at',
        `check ${start}`,
      );
      refused(
        await callOdd(svc, 'POST', '/reservations', { start_at: start, party_size: 2 }),
        'start_at',
        `create ${start}`,
      );
    }
    refused(
      await callOdd(svc, 'GET', q('9999-12-30T00:00:00Z', '9999-12-31T23:59:59Z')),
      'start_at_to',
      'search to 9999-12-31',
    );
    refused(
      await callOdd(svc, 'GET', q('0000-01-01T00:00:00Z', '0000-01-02T00:00:00Z')),
      'start_at_from',
      'search from 0000-01-01',
    );
    const created = await call(svc, 'POST', '/reservations', {
      start_at: '2027-12-21T19:00:00+01:00',
      party_size: 2,
    });
    assert.is(created.status, 201);
    refused(
      await callOdd(svc, 'PATCH', `/reservations/${created.body.data.id}`, {
        start_at: '9999-12-31T19:00:00Z',
      }),
      'start_at',
      'PATCH to 9999-12-31',
    );
    // The years around them answer as any other day; filters of the lists keep every year.
    const late = await call(svc, 'POST', '/availability/check', {
      start_at: '9998-12-31T19:00:00+01:00',
      party_size: 2,
    });
    assert.is(late.status, 200);
    assert.is((await call(svc, 'GET', q('9998-12-30T00:00:00Z', '9998-12-31T23:59:59Z'))).status, 200);
    assert.is((await call(svc, 'GET', '/reservations?start_at_to=9999-12-31T23:59:59Z')).status, 200);
    assert.is((await call(svc, 'GET', '/customers?updated_since=0000-01-01T00:00:00Z')).status, 200);
  },
);

t(
  'updated_since=…T24:00:00Z and other impossible filters are refused on the list routes',
  async ({ svc }) => {
    refused(
      await callOdd(svc, 'GET', '/customers?updated_since=2027-01-01T24:00:00Z'),
      'updated_since',
      'customers',
    );
    refused(
      await callOdd(svc, 'GET', '/reservations?updated_since=2027-01-01T24:00:00Z'),
      'updated_since',
      'reservations',
    );
    refused(
      await callOdd(svc, 'GET', '/reservations?start_at_from=2027-04-31T00:00:00Z'),
      'start_at_from',
      'reservations start_at_from 31 April',
    );
    assert.is((await call(svc, 'GET', '/customers?updated_since=2027-01-02T00:00:00Z')).status, 200);
  },
);

t('a custom field of type DATE refuses a day that does not exist (422, spec §2.4)', async ({ svc }) => {
  const res = await call(svc, 'POST', '/customers', {
    name: 'Date Check',
    custom_fields: { cf_birthday: '2027-02-30' },
  });
  assert.is(res.status, 422, JSON.stringify(res.body));
  assert.equal(
    res.body.error.details.issues.map((i: { path: string }) => i.path),
    ['custom_fields.cf_birthday'],
  );
  assert.is(await customersNamed(svc, 'Date Check'), 0);
  const ok = await call(svc, 'POST', '/customers', {
    name: 'Date Check',
    custom_fields: { cf_birthday: '2028-02-29' },
  });
  assert.is(ok.status, 201);
  assert.is(ok.body.data.custom_fields.cf_birthday.value, '2028-02-29');
});

t('name lengths count characters: 150 or 200 emoji are accepted, 201 are refused', async ({ svc }) => {
  const emoji150 = '😀'.repeat(150);
  const created = await call(svc, 'POST', '/customers', { name: emoji150, on_match: 'create_new' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(created.body.data.name, emoji150);
  const id = created.body.data.id;
  assert.is((await call(svc, 'PATCH', `/customers/${id}`, { name: '🍷'.repeat(200) })).status, 200);
  refused(await callOdd(svc, 'POST', '/customers', { name: '😀'.repeat(201) }), 'name', 'POST 201 emoji');
  refused(
    await callOdd(svc, 'PATCH', `/customers/${id}`, { name: '😀'.repeat(201) }),
    'name',
    'PATCH 201 emoji',
  );
  refused(await callOdd(svc, 'POST', '/customers', { name: 'a'.repeat(201) }), 'name', 'POST 201 letters');
  assert.is((await call(svc, 'GET', `/customers/${id}`)).body.data.name, '🍷'.repeat(200));

  const booked = await call(svc, 'POST', '/reservations', {
    start_at: '2027-12-03T19:00:00+01:00',
    party_size: 2,
    customer: { name: '🎉'.repeat(150), on_match: 'create_new' },
  });
  assert.is(booked.status, 201, JSON.stringify(booked.body));
  assert.is(booked.body.data.customer.name, '🎉'.repeat(150));
  refused(
    await callOdd(svc, 'POST', '/reservations', {
      start_at: '2027-12-03T19:15:00+01:00',
      party_size: 2,
      customer: { name: '🎉'.repeat(201) },
    }),
    'customer.name',
    'inline 201 emoji',
  );
});

t('a name that is empty after trimming is refused everywhere a name is taken', async ({ svc }) => {
  const before = await reservationCount(svc);
  for (const name of ['   ', '\t\n', '\u00a0'])
    refused(await callOdd(svc, 'POST', '/customers', { name }), 'name', `POST ${JSON.stringify(name)}`);
  const created = await call(svc, 'POST', '/customers', { name: '  Ada  ', on_match: 'create_new' });
  assert.is(created.status, 201);
  assert.is(created.body.data.name, '  Ada  ', 'an accepted name is kept as sent');
  refused(await callOdd(svc, 'PATCH', `/customers/${created.body.data.id}`, { name: ' ' }), 'name', 'PATCH');
  refused(
    await callOdd(svc, 'POST', '/reservations', {
      start_at: '2027-12-03T20:00:00+01:00',
      party_size: 2,
      customer: { name: '  ' },
    }),
    'customer.name',
    'inline on POST /reservations',
  );
  const r = await call(svc, 'POST', '/reservations', {
    start_at: '2027-12-03T20:00:00+01:00',
    party_size: 2,
  });
  assert.is(r.status, 201);
  refused(
    await callOdd(svc, 'PATCH', `/reservations/${r.body.data.id}`, { customer: { name: ' ' } }),
    'customer.name',
    'inline on PATCH /reservations',
  );
  assert.is(await reservationCount(svc), before + 1);
});

t(
  'phone_number "hello world" is refused (400 on the field, nothing written); possible numbers are stored in E.164',
  async ({ svc }) => {
    refused(
      await callOdd(svc, 'POST', '/customers', { name: 'Hello Phone', phone_number: 'hello world' }),
      'phone_number',
      'POST /customers',
    );
    assert.is(await customersNamed(svc, 'Hello Phone'), 0);
    refused(
      await callOdd(svc, 'POST', '/customers', {
        name: 'Hello Phone',
        phone_number: 'call +33 6 12 34 56 78',
      }),
      'phone_number',
      'a number inside a sentence',
    );
    const national = await call(svc, 'POST', '/customers', {
      name: 'Hello Phone',
      phone_number: '06 12 34 56 78',
      on_match: 'create_new',
    });
    assert.is(national.status, 201);
    assert.is(national.body.data.phone_number, '+33612345678');
    const id = national.body.data.id;
    refused(
      await callOdd(svc, 'PATCH', `/customers/${id}`, { phone_number: 'hello world' }),
      'phone_number',
      'PATCH',
    );
    assert.is((await call(svc, 'GET', `/customers/${id}`)).body.data.phone_number, '+33612345678');

    const before = await reservationCount(svc);
    const inline = await callOdd(svc, 'POST', '/reservations', {
      start_at: '2027-12-04T19:00:00+01:00',
      party_size: 2,
      customer: { name: 'Inline Phone', phone_number: 'hello world' },
    });
    refused(inline, 'customer.phone_number', 'inline on POST /reservations');
    // The message names the field by its whole path, as every other issue of the body does.
    assert.match(
      inline.body.error.details.issues[0].message,
      /^customer\.phone_number is not a possible phone number/,
    );
    assert.is(await reservationCount(svc), before, 'no reservation');
    assert.is(await customersNamed(svc, 'Inline Phone'), 0, 'no customer');
    const booked = await call(svc, 'POST', '/reservations', {
      start_at: '2027-12-04T19:00:00+01:00',
      party_size: 2,
      customer: { name: 'Inline Phone', phone_number: '+44 7700 900123', on_match: 'create_new' },
    });
    assert.is(booked.status, 201);
    assert.is(booked.body.data.customer.phone_number, '+447700900123');
    refused(
      await callOdd(svc, 'PATCH', `/reservations/${booked.body.data.id}`, {
        customer: { phone_number: 'hello world' },
      }),
      'customer.phone_number',
      'inline on PATCH /reservations',
    );
  },
);

t('party_size: at most 100 to search, at most 1000 to book, and the document says so', async ({ svc }) => {
  const window = `start_at_from=${encodeURIComponent('2027-12-05T18:00:00+01:00')}&start_at_to=${encodeURIComponent('2027-12-05T23:00:00+01:00')}`;
  refused(await callOdd(svc, 'GET', `/availability?party_size=101&${window}`), 'party_size', 'search 101');
  assert.is((await call(svc, 'GET', `/availability?party_size=100&${window}`)).status, 200);
  refused(
    await callOdd(svc, 'POST', '/availability/check', {
      start_at: '2027-12-05T19:00:00+01:00',
      party_size: 101,
    }),
    'party_size',
    'check 101',
  );
  const check100 = await call(svc, 'POST', '/availability/check', {
    start_at: '2027-12-05T19:00:00+01:00',
    party_size: 100,
  });
  assert.is(check100.status, 200);
  assert.is(check100.body.data.available, false);
  refused(
    await callOdd(svc, 'POST', '/reservations', { start_at: '2027-12-05T19:00:00+01:00', party_size: 1001 }),
    'party_size',
    'book 1001',
  );
  const big = await call(svc, 'POST', '/reservations', {
    start_at: '2027-12-05T19:00:00+01:00',
    party_size: 1000,
    bypass_availability: true,
  });
  assert.is.not(big.status, 400, JSON.stringify(big.body));
  refused(
    await callOdd(svc, 'POST', '/reservations', { start_at: '2027-12-05T19:00:00+01:00', party_size: 1e20 }),
    'party_size',
    'book 1e20',
  );

  const doc = (await call(svc, 'GET', '/openapi.json')).body;
  const op = (path: string) => doc.paths[path] ?? doc.paths[`/api/partner/v1${path}`];
  const queryMax = (path: string, name: string) =>
    op(path).get.parameters.find((p: { name: string }) => p.name === name).schema.maximum;
  const bodyMax = (path: string, method: string) =>
    op(path)[method].requestBody.content['application/json'].schema.properties.party_size.maximum;
  assert.is(queryMax('/availability', 'party_size'), PARTY_SIZE.search.max);
  assert.is(bodyMax('/availability/check', 'post'), PARTY_SIZE.search.max);
  assert.is(bodyMax('/reservations', 'post'), PARTY_SIZE.booking.max);
  assert.is(bodyMax('/reservations/{id}', 'patch'), PARTY_SIZE.booking.max);
  assert.is(queryMax('/reservations', 'page'), MAX_PAGE);
  assert.is(queryMax('/reservations', 'per_page'), 100);
  assert.is(queryMax('/customers', 'limit'), 100);
});

t(
  'numeric query parameters out of range or not plain integers are refused, never altered',
  async ({ svc }) => {
    for (const page of [
      '1e20',
      '100000000000000000000',
      '9007199254740993',
      String(MAX_PAGE + 1),
      '1.5',
      '-1',
    ])
      refused(await callOdd(svc, 'GET', `/reservations?page=${page}`), 'page', `page=${page}`);
    for (const perPage of ['1e2', '99999999999999999999', '101'])
      refused(
        await callOdd(svc, 'GET', `/reservations?per_page=${perPage}`),
        'per_page',
        `per_page=${perPage}`,
      );
    for (const limit of ['1e2', '99999999999999999999', '0x10'])
      refused(await callOdd(svc, 'GET', `/customers?limit=${limit}`), 'limit', `limit=${limit}`);
    const last = await call(svc, 'GET', `/reservations?page=${MAX_PAGE}`);
    assert.is(last.status, 200);
    assert.is(last.body.pagination.page, MAX_PAGE, 'the page asked for is the page answered');
  },
);

t.run();
