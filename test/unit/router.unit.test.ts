// The route declarations' wiring on @koa/router (src/http/router.ts): which declaration answers a method
// and path, and the 404/405 it throws otherwise. A property test compares it with the plainest router
// there is: try every route's regex in turn, literal paths first.
import fc from 'fast-check';
import type { Context } from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/core/errors';
import { createDispatcher, groupKey, noRouteMessage, routeMatchers } from '../../src/http/router';

const routes = [
  { method: 'GET', path: '/api/v1' },
  { method: 'GET', path: '/api/v1/me' },
  { method: 'GET', path: '/api/v1/customers' },
  { method: 'POST', path: '/api/v1/customers' },
  { method: 'POST', path: '/api/v1/customers/search' },
  { method: 'GET', path: '/api/v1/customers/{id}' },
  { method: 'PATCH', path: '/api/v1/customers/{id}' },
  { method: 'POST', path: '/api/v1/reservations/{id}/cancel' },
  { method: 'GET', path: '/api/v1/rooms/{room_id}/tables/{table_id}' },
];

type Outcome =
  | { kind: 'found'; route: string; path: string; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

const dispatch = createDispatcher(
  routes.map((r) => ({ ...r, route: `${r.method} ${r.path}` })),
  (route, ctx, path, params) => {
    (ctx.state as { outcome: Outcome }).outcome = { kind: 'found', route, path, params: { ...params } };
  },
);

/** The parts of a Koa context the router reads and writes. */
function fakeContext(method: string, path: string) {
  const headers: Record<string, string> = {};
  return {
    method,
    path,
    status: 404,
    state: {} as { outcome?: Outcome },
    request: {},
    response: { get: (k: string) => headers[k.toLowerCase()] ?? '' },
    set: (k: string, v: string) => {
      headers[k.toLowerCase()] = v;
    },
    remove: (k: string) => {
      delete headers[k.toLowerCase()];
    },
    headers,
  };
}

async function lookup(method: string, path: string): Promise<Outcome> {
  const ctx = fakeContext(method, path);
  try {
    await dispatch(ctx as unknown as Context);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.status === 404) {
      // A path that does not exist lists no methods (koa-router sets an empty one for OPTIONS).
      if (ctx.headers.allow !== undefined) throw new Error(`${method} ${path}: a 404 with an allow header`);
      return { kind: 'not_found' };
    }
    if (err.status === 405)
      return { kind: 'method_not_allowed', allowed: (ctx.headers.allow ?? '').split(', ') };
    throw err;
  }
  if (!ctx.state.outcome) throw new Error(`${method} ${path}: neither routed nor refused`);
  return ctx.state.outcome;
}

test('static paths, parameters, trailing slash and HEAD', async () => {
  assert.equal(await lookup('GET', '/api/v1/me'), {
    kind: 'found',
    route: 'GET /api/v1/me',
    path: '/api/v1/me',
    params: {},
  });
  assert.equal(await lookup('GET', '/api/v1/me/'), await lookup('GET', '/api/v1/me'));
  assert.equal(await lookup('HEAD', '/api/v1/me'), { ...(await lookup('GET', '/api/v1/me')) });
  assert.equal(await lookup('GET', '/api/v1/rooms/r%201/tables/t_2'), {
    kind: 'found',
    route: 'GET /api/v1/rooms/{room_id}/tables/{table_id}',
    path: '/api/v1/rooms/{room_id}/tables/{table_id}',
    params: { room_id: 'r 1', table_id: 't_2' },
  });
  assert.equal(await lookup('GET', '/API/v1/me'), { kind: 'not_found' }, 'paths are case-sensitive');
});

test('a literal path wins for its methods; the patterns answer the others', async () => {
  assert.is(
    ((await lookup('POST', '/api/v1/customers/search')) as { route: string }).route,
    'POST /api/v1/customers/search',
  );
  assert.equal(await lookup('GET', '/api/v1/customers/search'), {
    kind: 'found',
    route: 'GET /api/v1/customers/{id}',
    path: '/api/v1/customers/{id}',
    params: { id: 'search' },
  });
});

test('405 lists every method of every path that matches; 404 when none does', async () => {
  const search = await lookup('DELETE', '/api/v1/customers/search');
  assert.is(search.kind, 'method_not_allowed');
  assert.equal(new Set((search as { allowed: string[] }).allowed), new Set(['POST', 'HEAD', 'GET', 'PATCH']));
  assert.equal(await lookup('GET', '/api/v1/reservations/r1/cancel'), {
    kind: 'method_not_allowed',
    allowed: ['POST'],
  });
  // A method no declaration may use (OPTIONS, TRACE, WebDAV's) is refused the same way.
  assert.equal(await lookup('OPTIONS', '/api/v1/reservations/r1/cancel'), {
    kind: 'method_not_allowed',
    allowed: ['POST'],
  });
  assert.equal(await lookup('GET', '/api/v1/nope'), { kind: 'not_found' });
  assert.equal(await lookup('OPTIONS', '/api/v1/nope'), { kind: 'not_found' });
  assert.equal(await lookup('GET', '/api/v1/customers//'), { kind: 'not_found' }, 'an empty id is no id');
  assert.equal(await lookup('GET', '/api/v1/reservations//cancel'), { kind: 'not_found' });
});

test('a malformed escape stays as sent, for the parameter schema to refuse', async () => {
  assert.equal(((await lookup('GET', '/api/v1/customers/%E0%A4%A')) as { params: unknown }).params, {
    id: '%E0%A4%A',
  });
});

test('routes are grouped by their first four segments; a trailing slash is not one', () => {
  assert.is(groupKey('/api/partner/v1/customers/c_1/notes'), '/api/partner/v1/customers');
  assert.is(groupKey('/api/partner/v1/customers/'), '/api/partner/v1/customers');
  assert.is(groupKey('/api/partner/v1/me'), '/api/partner/v1/me');
  assert.is(groupKey('/api/partner/v1/'), '/api/partner/v1');
  assert.is(groupKey('/api/partner/v1'), '/api/partner/v1');
  assert.is(groupKey('/docs/assets/x.js'), '/docs/assets/x.js');
  assert.is(groupKey('/'), '/');
  assert.is(groupKey('//'), '/', 'one trailing slash dropped, then the root');
  assert.is(groupKey('/api//v1/x/y'), '/api//v1/x', 'an empty segment is a segment');
  assert.is(groupKey('/api/v1/customers//'), '/api/v1/customers/');
});

test('two routes for one method and path are refused', () => {
  assert.throws(
    () =>
      createDispatcher(
        [
          { method: 'GET', path: '/a/{x}', route: 1 },
          { method: 'GET', path: '/a/{y}', route: 2 },
        ],
        () => {},
      ),
    /two routes for GET/,
  );
});

// The reference: one anchored regex per route, as a router that tries every route in turn would.
function reference(method: string, path: string) {
  const hits = routes.filter((r) => new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`).test(path));
  const exact = hits.filter((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (exact.length) {
    // Literal paths first, as the router promises.
    const best = exact.find((r) => !r.path.includes('{')) ?? exact[0];
    return { kind: 'found', route: `${best?.method} ${best?.path}` };
  }
  if (hits.length)
    return {
      kind: 'method_not_allowed',
      allowed: new Set(hits.flatMap((r) => (r.method === 'GET' ? ['HEAD', 'GET'] : [r.method]))),
    };
  return { kind: 'not_found' };
}

test('property: the router agrees with trying every route regex in turn', async () => {
  const segment = fc.oneof(
    fc.constantFrom(
      'api',
      'v1',
      'me',
      'customers',
      'search',
      'reservations',
      'cancel',
      'rooms',
      'tables',
      '',
    ),
    fc.stringMatching(/^[a-z0-9_%-]{1,6}$/),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
      fc.array(segment, { minLength: 0, maxLength: 6 }),
      fc.boolean(),
      async (method, segs, slash) => {
        const path = `/${['api', 'v1', ...segs].join('/')}${slash ? '/' : ''}`;
        const got = await lookup(method, path);
        const want = reference(method, path);
        assert.is(got.kind, want.kind, `${method} ${path}`);
        if (got.kind === 'found')
          assert.is(got.route, (want as { route: string }).route, `${method} ${path}`);
        if (got.kind === 'method_not_allowed')
          assert.equal(new Set(got.allowed), (want as { allowed: Set<string> }).allowed, `${method} ${path}`);
      },
    ),
    { numRuns: 2000 },
  );
});

test("a 404's suggestion fixes the route's own words only, never the id the caller gave", () => {
  const matchers = routeMatchers(routes);
  const meant = (method: string, path: string) =>
    /did you mean (.*)\? \(/.exec(noRouteMessage(matchers, method, path))?.[1] ?? null;
  // Ids are case-sensitive and hold `_`: a suggestion with the id lowercased or dashed names another
  // (or no) customer, and following it answers 404 again.
  assert.is(meant('GET', '/api/v1/Customers/cus_AbC'), 'GET /api/v1/customers/cus_AbC');
  assert.is(meant('GET', '/api/v1/customer/cus_AbC'), 'GET /api/v1/customers/cus_AbC');
  assert.is(meant('POST', '/api/v1/Reservation/res_X_y/cancel'), 'POST /api/v1/reservations/res_X_y/cancel');
  assert.is(meant('GET', '/api/v1/room/Room_A/tables/T_1'), 'GET /api/v1/rooms/Room_A/tables/T_1');
  assert.is(meant('POST', '/api/v1/Customers/Search'), 'POST /api/v1/customers/search');
  // Another method's route is no suggestion; nothing close, none.
  assert.is(meant('DELETE', '/api/v1/customer/cus_1'), null);
  assert.is(meant('GET', '/api/v1/nothing'), null);
});

test.run();
