// What the OpenAPI document says where a partner reads it: each case the server answers is described
// (src/http/openapi.ts, from the route declarations).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateOpenApi } from '../../src/http/openapi';
import { partnerRoutes } from '../../src/http/routes/index';

const t = suite('openapi descriptions');
const doc = generateOpenApi(partnerRoutes(), 'http://127.0.0.1') as {
  paths: Record<string, Record<string, { description?: string }>>;
  components: { schemas: Record<string, unknown> };
};

t(
  'POST /missed-calls states the 502 of a report without external_call_id (a retry records another call)',
  () => {
    const text = doc.paths['/api/partner/v1/missed-calls']?.post?.description ?? '';
    assert.match(text, 'A report without `external_call_id` cannot be retried');
    assert.match(text, 'records another call');
  },
);

t("a webhook delivery's event_type in responses names its values, webhook_endpoint.test included", () => {
  const op = doc.paths['/api/partner/v1/webhook-endpoints/{id}/deliveries']?.get as unknown as {
    responses: Record<string, { content: Record<string, { schema: unknown }> }>;
  };
  const text = JSON.stringify(op.responses['200']?.content['application/json']?.schema);
  const described = /"event_type":\{"type":"string","description":"([^"]*)"/.exec(text)?.[1] ?? '';
  for (const type of [
    'webhook_endpoint.test',
    'RESERVATION_UPDATED',
    'reservation.created',
    'customer.updated',
  ])
    assert.match(described, type, type);
});

t('every date-time query parameter of every route says to encode + as %2B', () => {
  type Param = {
    in: string;
    name: string;
    description?: string;
    schema?: { format?: string; description?: string };
  };
  let seen = 0;
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const params = ((op as { parameters?: Param[] }).parameters ?? []).filter(
        (p) => p.in === 'query' && p.schema?.format === 'date-time',
      );
      for (const p of params) {
        seen++;
        const text = `${p.description ?? ''} ${p.schema?.description ?? ''}`;
        assert.match(text, '%2B', `${method.toUpperCase()} ${path} ${p.name}`);
      }
    }
  assert.ok(seen >= 6, `${seen} date-time query parameters found`);
});

/** Every `pattern` in the document, with where it stands. */
function patterns(node: unknown, at = '#', out: [string, string][] = []): [string, string][] {
  if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) patterns(v, `${at}/${i}`, out);
  } else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === 'pattern' && typeof v === 'string') out.push([at, v]);
      else patterns(v, `${at}/${k}`, out);
    }
  return out;
}

t(
  'every pattern is portable: no \\u escape (Go regexp and PCRE2 refuse it), and it compiles as Unicode',
  () => {
    const found = patterns(doc);
    assert.ok(found.length > 3, 'the document declares patterns');
    for (const [at, pattern] of found) {
      assert.not.match(pattern, '\\u', `${at}: ${pattern}`);
      new RegExp(pattern, 'u');
    }
  },
);

t.run();
