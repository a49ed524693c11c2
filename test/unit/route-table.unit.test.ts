import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RouteTable } from '../../src/http/route-table';

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
const table = new RouteTable(routes.map((r) => ({ ...r, route: `${r.method} ${r.path}` })));

test('static paths, parameters, trailing slash and HEAD', () => {
  assert.equal(table.lookup('GET', '/api/v1/me'), {
    kind: 'found',
    route: 'GET /api/v1/me',
    path: '/api/v1/me',
    params: {},
  });
  assert.equal(table.lookup('GET', '/api/v1/me/'), table.lookup('GET', '/api/v1/me'));
  assert.equal(table.lookup('HEAD', '/api/v1/me').kind, 'found');
  assert.equal(table.lookup('GET', '/api/v1/rooms/r%201/tables/t_2'), {
    kind: 'found',
    route: 'GET /api/v1/rooms/{room_id}/tables/{table_id}',
    path: '/api/v1/rooms/{room_id}/tables/{table_id}',
    params: { room_id: 'r 1', table_id: 't_2' },
  });
});

test('a literal path wins for its methods; the patterns answer the others', () => {
  assert.is(
    (table.lookup('POST', '/api/v1/customers/search') as { route: string }).route,
    'POST /api/v1/customers/search',
  );
  const get = table.lookup('GET', '/api/v1/customers/search');
  assert.equal(get, {
    kind: 'found',
    route: 'GET /api/v1/customers/{id}',
    path: '/api/v1/customers/{id}',
    params: { id: 'search' },
  });
});

test('405 lists every method of every path that matches; 404 when none does', () => {
  assert.equal(table.lookup('DELETE', '/api/v1/customers/search'), {
    kind: 'method_not_allowed',
    allowed: ['POST', 'GET', 'PATCH'],
  });
  assert.equal(table.lookup('GET', '/api/v1/reservations/r1/cancel'), {
    kind: 'method_not_allowed',
    allowed: ['POST'],
  });
  assert.equal(table.lookup('GET', '/api/v1/nope'), { kind: 'not_found' });
  assert.equal(table.lookup('GET', '/api/v1/customers//'), { kind: 'not_found' }, 'an empty id is no id');
  assert.equal(table.lookup('GET', '/api/v1/reservations//cancel'), { kind: 'not_found' });
});

test('a malformed escape stays as sent, for the parameter schema to refuse', () => {
  assert.equal((table.lookup('GET', '/api/v1/customers/%E0%A4%A') as { params: unknown }).params, {
    id: '%E0%A4%A',
  });
});

test('two routes for one method and path are refused', () => {
  assert.throws(
    () =>
      new RouteTable([
        { method: 'GET', path: '/a/{x}', route: 1 },
        { method: 'GET', path: '/a/{y}', route: 2 },
      ]),
    /two routes for GET/,
  );
});

// The reference: one anchored regex per route, as a router that tries every route in turn would.
function reference(method: string, path: string) {
  const hits = routes.filter((r) => new RegExp(`^${r.path.replace(/\{\w+\}/g, '[^/]+')}/?$`).test(path));
  const exact = hits.filter((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  if (exact.length) {
    // Literal paths first, as the table promises.
    const best = exact.find((r) => !r.path.includes('{')) ?? exact[0];
    return { kind: 'found', route: `${best?.method} ${best?.path}` };
  }
  if (hits.length) return { kind: 'method_not_allowed', allowed: new Set(hits.map((r) => r.method)) };
  return { kind: 'not_found' };
}

test('property: the table agrees with trying every route regex in turn', () => {
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
  fc.assert(
    fc.property(
      fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'HEAD'),
      fc.array(segment, { minLength: 0, maxLength: 6 }),
      fc.boolean(),
      (method, segs, slash) => {
        const path = `/${['api', 'v1', ...segs].join('/')}${slash ? '/' : ''}`;
        const got = table.lookup(method, path);
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

test.run();
