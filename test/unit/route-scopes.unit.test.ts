// Every documented route asks for exactly the scopes the spec's table (§4) names, written out here by
// hand: a route whose scope is changed or dropped (POST /reservations/{id}/cancel taking
// RESERVATIONS_WRITE, PATCH /customers/{id} forgetting CUSTOMERS_READ) fails, and so does a new route
// nobody put in the table. The rows the spec does not name (catalog paths, history, webhook endpoint
// operations, missed calls) are DESIGN.md's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { partnerRoutes } from '../../src/http/routes/index';

const PUBLIC = 'public';
const TOKEN = 'any token';
const EXPECTED: Record<string, string | string[]> = {
  'GET /': PUBLIC,
  'GET /openapi.json': PUBLIC,
  'GET /healthz': PUBLIC,
  'GET /me': TOKEN,
  'GET /rooms': ['CATALOG_READ'],
  'GET /tables': ['CATALOG_READ'],
  'GET /shifts': ['CATALOG_READ'],
  'GET /prescribers': ['CATALOG_READ'],
  'GET /discounts': ['CATALOG_READ'],
  'GET /message-templates': ['CATALOG_READ'],
  'GET /customer-fields': ['CUSTOMERS_READ'],
  'GET /availability': ['AVAILABILITY_READ'],
  'POST /availability/check': ['AVAILABILITY_READ'],
  'GET /customers': ['CUSTOMERS_READ'],
  'GET /customers/{id}': ['CUSTOMERS_READ'],
  'POST /customers': ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'],
  'PATCH /customers/{id}': ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'],
  'GET /reservations': ['RESERVATIONS_READ'],
  'POST /reservations': ['RESERVATIONS_WRITE'],
  'GET /reservations/{id}': ['RESERVATIONS_READ'],
  'PATCH /reservations/{id}': ['RESERVATIONS_WRITE'],
  'POST /reservations/{id}/cancel': ['RESERVATIONS_CANCEL'],
  'GET /reservations/{id}/history': ['RESERVATIONS_READ'],
  'POST /webhook-endpoints': ['WEBHOOKS_WRITE'],
  'GET /webhook-endpoints': ['WEBHOOKS_WRITE'],
  'GET /webhook-endpoints/{id}': ['WEBHOOKS_WRITE'],
  'PATCH /webhook-endpoints/{id}': ['WEBHOOKS_WRITE'],
  'DELETE /webhook-endpoints/{id}': ['WEBHOOKS_WRITE'],
  'POST /webhook-endpoints/{id}/rotate-secret': ['WEBHOOKS_WRITE'],
  'POST /webhook-endpoints/{id}/test': ['WEBHOOKS_WRITE'],
  'GET /webhook-endpoints/{id}/deliveries': ['WEBHOOKS_WRITE'],
  'GET /webhook-endpoints/{id}/deliveries/{delivery_id}': ['WEBHOOKS_WRITE'],
  'POST /webhook-endpoints/{id}/deliveries/{delivery_id}/resend': ['WEBHOOKS_WRITE'],
  'POST /missed-calls': ['MISSED_CALLS_WRITE'],
  'GET /missed-calls': ['MISSED_CALLS_WRITE'],
  'GET /missed-calls/{id}': ['MISSED_CALLS_WRITE'],
  'GET /.well-known/oauth-authorization-server': PUBLIC,
  // The OAuth endpoints authenticate the client themselves (RFC 6749 §2.3), not with a bearer token.
  'POST /api/oauth/token': PUBLIC,
  'POST /api/oauth/revoke': PUBLIC,
};

test('every documented route asks for the scopes of the table, no fewer, no others', () => {
  const seen = new Set<string>();
  for (const route of partnerRoutes()) {
    if (route.hidden) continue;
    const name = `${route.method} ${route.path}`;
    seen.add(name);
    const access = route.access;
    const got =
      access.kind === 'public' ? PUBLIC : access.kind === 'token' ? TOKEN : [...access.scopes].sort();
    assert.ok(name in EXPECTED, `${name}: not in the table (add its row)`);
    assert.equal(got, EXPECTED[name], name);
  }
  assert.equal([...seen].sort(), Object.keys(EXPECTED).sort(), 'the table names only routes that exist');
});

test.run();
