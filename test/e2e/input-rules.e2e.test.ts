// The rule table of src/http/input-rules.ts, checked on every route that can make each kind of mistake.
// Routes come from the declarations themselves, so a new route is covered the day it is declared (and a
// new route with references or windows must give this file a valid sample input, or it fails).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AnyRoute } from '../../src/http/route';
import { partnerRoutes } from '../../src/http/routes';
import type { JsonSchema } from '../../src/http/schema';
import { requestWithRepeats } from '../helpers/repeated-headers';
import {
  create,
  DINNER,
  type ReservationService,
  startReservationService,
  TOKENS,
} from '../helpers/reservations';

interface Ctx {
  svc: ReservationService;
  reservationId: string;
}
const t = suite<Ctx>('one answer per kind of mistake');

// The OAuth token and revocation endpoints answer RFC 6749 bodies instead (test/e2e/oauth-token.e2e.test.ts).
const routes = partnerRoutes().filter((r) => !r.hidden && !r.ownErrors);

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  const made = await create(ctx.svc, { external_id: 'rules-1' });
  assert.is(made.status, 201, made.text);
  ctx.reservationId = made.body.data.id;
});
t.after(async ({ svc }) => svc.close());

/** A valid input for each operation a rule below needs to reach past validation. */
const SAMPLES: Record<string, { query?: Record<string, string>; body?: Record<string, unknown> }> = {
  searchAvailability: {
    query: {
      start_at_from: '2026-06-03T18:00:00+02:00',
      start_at_to: '2026-06-03T22:00:00+02:00',
      party_size: '2',
    },
  },
  checkAvailability: { body: { start_at: DINNER, party_size: 2 } },
  createReservation: { body: { start_at: DINNER, party_size: 2 } },
  updateReservation: { body: {} },
  cancelReservation: { body: {} },
  updateCustomer: { body: {} },
  updateWebhookEndpoint: { body: {} },
  listReservations: { query: {} },
  listMissedCalls: { query: {} },
  reportMissedCall: { body: { caller_phone_number: '0612345678' } },
};

const props = (schema: { json: JsonSchema } | undefined) =>
  Object.entries(((schema?.json ?? {}) as { properties?: Record<string, JsonSchema> }).properties ?? {});

function url(ctx: Ctx, route: AnyRoute, query: Record<string, string> = {}, id?: string): string {
  const path = route.path.replace(/\{\w+\}/g, () => encodeURIComponent(id ?? ctx.reservationId));
  const qs = new URLSearchParams(query).toString();
  const full = route.absolute ? path : `${route.path === '/' ? '' : path}`;
  return `${full}${qs ? `?${qs}` : ''}`;
}

const call = (ctx: Ctx, route: AnyRoute, target: string, body?: unknown, invalid = false) =>
  ctx.svc.api(route.method, target, {
    token: route.access.kind === 'public' ? null : TOKENS.full,
    ...(body !== undefined ? { body, invalid } : {}),
  });

type Issue = { path: string; code: string; message: string };
const issues = (res: { body: { error?: { details?: { issues?: Issue[] } } } }) =>
  res.body.error?.details?.issues ?? [];

t(
  'an Authorization header given twice is 401 INVALID_AUTHENTICATION on every route that takes a token',
  async (ctx) => {
    for (const route of routes.filter((r) => r.access.kind !== 'public')) {
      const target = url(ctx, route, SAMPLES[route.operationId]?.query);
      const res = await requestWithRepeats(
        `${ctx.svc.url}${route.absolute ? '' : '/api/partner/v1'}${target}`,
        route.method,
        { authorization: [`Bearer ${TOKENS.full}`, `Bearer ${TOKENS.full}`] },
      );
      assert.is(res.status, 401, `${route.method} ${route.path}`);
      assert.is(res.body.error.code, 'INVALID_AUTHENTICATION', `${route.method} ${route.path}`);
    }
  },
);

t('an undeclared query parameter is 400 unknown_parameter on every route', async (ctx) => {
  for (const route of routes) {
    const res = await call(
      ctx,
      route,
      url(ctx, route, { ...SAMPLES[route.operationId]?.query, zz_typo: '1' }),
    );
    const where = `${route.method} ${route.path}`;
    assert.is(res.status, 400, `${where}: ${res.text}`);
    assert.is(res.body.error.code, 'VALIDATION_ERROR', where);
    assert.equal(
      issues(res).map((i) => [i.path, i.code]),
      [['zz_typo', 'unknown_parameter']],
      where,
    );
  }
});

t(
  'a query parameter whose %-escapes are malformed or not UTF-8 is 400 invalid_encoding on it, on every route',
  async (ctx) => {
    let checked = 0;
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      const sample = SAMPLES[route.operationId] ?? {};
      for (const [name] of props(route.query)) {
        // Latin-1 "é", half of a surrogate pair, a broken escape: read as U+FFFD or kept as text, they
        // filtered on a value nobody sent (an empty list, 200).
        for (const value of ['Caf%E9', '%ED%A0%80', '50%', '%zz']) {
          const { [name]: _, ...others } = sample.query ?? {};
          const base = url(ctx, route, others);
          const target = `${base}${base.includes('?') ? '&' : '?'}${name}=${value}`;
          const res = await call(ctx, route, target, sample.body);
          assert.is(res.status, 400, `${where} ${name}=${value}: ${res.text}`);
          assert.equal(
            issues(res).map((i) => [i.path, i.code]),
            [[name, 'invalid_encoding']],
            `${where} ${name}=${value}`,
          );
          checked++;
        }
      }
    }
    assert.ok(checked > 40, `only ${checked} checked`);
    // UTF-8 escapes, %25 and U+FFFD sent as such are taken.
    const ok = await ctx.svc.api('GET', '/customers?tag=caf%C3%A9%2050%25%EF%BF%BD', { token: TOKENS.full });
    assert.is(ok.status, 200, ok.text);
  },
);

t(
  'a name given twice (a property in a JSON object, at any depth, or a query parameter) is 400 duplicate_property at its path with one wording, on every route',
  async (ctx) => {
    let checked = 0;
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      const sample = SAMPLES[route.operationId] ?? {};
      for (const [name] of props(route.query)) {
        // Given twice, whatever the values: never read as the last one.
        const qs = `${name}=1&${name}=2`;
        const { [name]: _, ...others } = sample.query ?? {};
        const base = url(ctx, route, others);
        const res = await call(ctx, route, `${base}${base.includes('?') ? '&' : '?'}${qs}`, sample.body);
        assert.is(res.status, 400, `${where} ?${qs}: ${res.text}`);
        const issue = issues(res).find((i) => i.path === name);
        assert.is(issue?.code, 'duplicate_property', `${where} ?${qs}: ${res.text}`);
        // A list goes comma-separated in one (GET /reservations?status=A,B): the message says so there.
        const several = route.operationId === 'listReservations' && name === 'status';
        assert.is(
          issue?.message,
          several
            ? 'status is given more than once; give it once: several values go comma-separated in one (status=A,B)'
            : `${name} is given more than once; give it once`,
          where,
        );
        checked++;
      }
      if (!route.body) continue;
      // Valid but for the repeat: a body of the sample's own properties, one of them given twice.
      const given = Object.entries(sample.body ?? {});
      const entries = given.length ? given : [['zz_twice', 1] as [string, unknown]];
      const [first] = entries[0] as [string, unknown];
      const rawBody = `{${[...entries, [first, entries[0]?.[1]]].map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
      const res = await ctx.svc.api(route.method, url(ctx, route, sample.query), {
        token: TOKENS.full,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      assert.is(res.status, 400, `${where} ${rawBody}: ${res.text}`);
      assert.equal(
        issues(res).map((i) => [i.path, i.code, i.message]),
        [[first, 'duplicate_property', `${first} is given more than once; give it once`]],
        where,
      );
      checked++;
    }
    assert.ok(checked > 20, `only ${checked} checked`);
    // Deeper: the path names the object that repeats it, and the last value is never booked.
    const before = await ctx.svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    const nested = await ctx.svc.api('POST', '/reservations', {
      token: TOKENS.full,
      rawBody: `{"start_at":"${DINNER}","party_size":2,"customer":{"name":"Ana","name":"Bea"}}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.is(nested.status, 400, nested.text);
    assert.equal(issues(nested)[0]?.path, 'customer.name');
    const twice = await ctx.svc.api('POST', '/reservations', {
      token: TOKENS.full,
      rawBody: `{"start_at":"${DINNER}","party_size":2,"party_size":8}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal([twice.status, issues(twice)[0]?.path], [400, 'party_size'], twice.text);
    const after = await ctx.svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    assert.is(after.body.pagination.total, before.body.pagination.total, 'nothing was booked');
    // The same names in sibling objects, or in strings, are no repeat: `customer` and `metadata` both
    // give `name`, `metadata` gives `party_size` beside the body's own, and strings say "party_size".
    const fine = await ctx.svc.api('POST', '/reservations', {
      token: TOKENS.full,
      rawBody: `{"start_at":"${DINNER}","party_size":2,"customer":{"name":"party_size"},"metadata":{"name":"start_at","party_size":"party_size"}}`,
      headers: { 'content-type': 'application/json' },
    });
    assert.is(fine.status, 201, fine.text);
    assert.is(fine.body.data.party_size, 2);
    assert.is(fine.body.data.customer?.name, 'party_size');
    assert.equal(fine.body.data.metadata, { name: 'start_at', party_size: 'party_size' });
  },
);

t(
  'a value of the wrong type is 400 invalid_type, on every declared query and body field that can have one',
  async (ctx) => {
    let checked = 0;
    for (const route of routes) {
      const sample = SAMPLES[route.operationId] ?? {};
      for (const [name, schema] of props(route.query)) {
        // A query string carries text: only numbers and booleans can be of the wrong type there.
        if (schema.type !== 'integer' && schema.type !== 'boolean') continue;
        const res = await call(ctx, route, url(ctx, route, { ...sample.query, [name]: 'abc' }), sample.body);
        assert.is(res.status, 400, `${route.method} ${route.path} ?${name}=abc: ${res.text}`);
        assert.ok(
          issues(res).some((i) => i.path === name && ['invalid_type', 'invalid_format'].includes(i.code)),
          `${route.method} ${route.path} ?${name}: ${res.text}`,
        );
        // A query string carries only text: the message says what text is read, not "not a string".
        const said = issues(res).find((i) => i.path === name)?.message ?? '';
        assert.not.match(said, 'not a string', `${route.method} ${route.path} ?${name}: ${said}`);
        assert.match(
          said,
          schema.type === 'integer' ? 'plain decimal digits' : 'true or false',
          `${route.method} ${route.path} ?${name}: ${said}`,
        );
        checked++;
      }
      for (const [name, schema] of props(route.body)) {
        if (!['string', 'integer', 'number', 'boolean', 'array'].includes(String(schema.type))) continue;
        const body = { ...(sample.body ?? {}), [name]: { not: 'this' } };
        const res = await call(ctx, route, url(ctx, route, sample.query), body, true);
        assert.is(res.status, 400, `${route.method} ${route.path} body.${name}: ${res.text}`);
        assert.ok(
          issues(res).some((i) => i.path === name && i.code === 'invalid_type'),
          `${route.method} ${route.path} body.${name}: ${res.text}`,
        );
        checked++;
      }
    }
    assert.ok(checked > 20, `only ${checked} fields checked`);
  },
);

t('a value past a declared bound is 400 out_of_range, never clamped', async (ctx) => {
  let checked = 0;
  for (const route of routes) {
    const sample = SAMPLES[route.operationId] ?? {};
    const tooBig = (schema: JsonSchema): string | number | null =>
      typeof schema.maxLength === 'number'
        ? 'x'.repeat(schema.maxLength + 1)
        : typeof schema.maximum === 'number'
          ? schema.maximum + 1
          : null;
    for (const [name, schema] of props(route.query)) {
      const value = tooBig(schema);
      if (value === null) continue;
      const res = await call(
        ctx,
        route,
        url(ctx, route, { ...sample.query, [name]: String(value) }),
        sample.body,
      );
      const where = `${route.method} ${route.path} ?${name}`;
      assert.is(res.status, 400, `${where}: ${res.text}`);
      assert.ok(
        issues(res).some((i) => i.path === name && i.code === 'out_of_range'),
        `${where}: ${res.text}`,
      );
      checked++;
    }
    for (const [name, schema] of props(route.body)) {
      const value = tooBig(schema);
      if (value === null) continue;
      const res = await call(
        ctx,
        route,
        url(ctx, route, sample.query),
        { ...(sample.body ?? {}), [name]: value },
        true,
      );
      const where = `${route.method} ${route.path} body.${name}`;
      assert.is(res.status, 400, `${where}: ${res.text}`);
      assert.ok(
        issues(res).some((i) => i.path === name && i.code === 'out_of_range'),
        `${where}: ${res.text}`,
      );
      checked++;
    }
  }
  assert.ok(checked > 10, `only ${checked} fields checked`);
});

t(
  'a window whose upper bound is before its lower bound is 400 invalid_range on every route with one',
  async (ctx) => {
    const withWindows = routes.filter((r) => r.windows?.length);
    assert.ok(withWindows.length >= 2);
    for (const route of withWindows) {
      const sample = SAMPLES[route.operationId];
      assert.ok(sample, `${route.operationId} needs a sample in this file`);
      for (const [lower, upper] of route.windows ?? []) {
        const query = {
          ...sample.query,
          [lower]: '2026-06-03T22:00:00+02:00',
          [upper]: '2026-06-03T18:00:00+02:00',
        };
        const res = await call(ctx, route, url(ctx, route, query));
        assert.is(res.status, 400, `${route.operationId}: ${res.text}`);
        assert.equal(
          issues(res).map((i) => [i.path, i.code]),
          [[upper, 'invalid_range']],
        );
        // Equal bounds are a one-instant window (both inclusive), not a mistake.
        const same = await call(ctx, route, url(ctx, route, { ...query, [upper]: query[lower] as string }));
        assert.is(same.status, 200, `${route.operationId} equal bounds: ${same.text}`);
      }
    }
  },
);

t(
  'an id in the query or body naming nothing of the restaurant is 422 unknown_reference on every route',
  async (ctx) => {
    const withRefs = routes.filter((r) => r.references);
    assert.ok(withRefs.length >= 5);
    const before = await ctx.svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    for (const route of withRefs) {
      const sample = SAMPLES[route.operationId];
      assert.ok(sample, `${route.operationId} needs a sample in this file`);
      for (const [where, refs] of Object.entries(route.references ?? {})) {
        for (const [path, kind] of Object.entries(refs ?? {})) {
          const [head, leaf] = path.split('.') as [string, string | undefined];
          const isArray =
            props(where === 'body' ? route.body : route.query).find(([n]) => n === head)?.[1].type ===
            'array';
          const value = leaf ? { [leaf]: 'nope_404' } : isArray ? ['nope_404'] : 'nope_404';
          const res =
            where === 'query'
              ? await call(ctx, route, url(ctx, route, { ...sample.query, [head]: 'nope_404' }))
              : await call(ctx, route, url(ctx, route, sample.query), { ...sample.body, [head]: value });
          const label = `${route.operationId} ${where}.${path}`;
          assert.is(res.status, 422, `${label}: ${res.text}`);
          assert.is(res.body.error.code, 'VALIDATION_ERROR');
          assert.equal(
            issues(res).map((i) => [i.path, i.code]),
            [[isArray ? `${path}.0` : path, 'unknown_reference']],
            label,
          );
          assert.match(
            res.body.error.details.reason,
            kind === 'customer' ? /^CUSTOMER_NOT_FOUND$/ : /^UNKNOWN_/,
          );
        }
      }
    }
    // Nothing was written by any of those: the reservations made before are still the only ones.
    const list = await ctx.svc.api('GET', '/reservations?per_page=100', { token: TOKENS.full });
    assert.ok(before.body.pagination.total >= 1);
    assert.is(list.body.pagination.total, before.body.pagination.total);
  },
);

t('an id in the path naming nothing this credential can see is 404 on every route with one', async (ctx) => {
  const withIds = routes.filter((r) => r.params);
  assert.ok(withIds.length >= 5);
  for (const route of withIds) {
    const sample = SAMPLES[route.operationId] ?? {};
    const res = await call(ctx, route, url(ctx, route, sample.query, 'nope_404'), sample.body);
    assert.is(res.status, 404, `${route.method} ${route.path}: ${res.text}`);
    assert.is(res.body.error.code, 'RESOURCE_NOT_FOUND');
  }
});

t.run();
