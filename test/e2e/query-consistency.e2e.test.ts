// One rule per kind of mistake, walked over the OpenAPI document itself: every query parameter that
// lists its values answers a value outside them alike (`invalid_enum`), every list that hands out
// `pagination.next_cursor` takes it back as `cursor`, and a body refused by a check after its schema
// says "The request body is invalid" as the schema's refusals do. A new operation is covered the day
// it is documented.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

interface Param {
  name: string;
  in: string;
  schema?: { enum?: string[]; pattern?: string; type?: string };
}
interface Operation {
  operationId: string;
  parameters?: (Param | { $ref: string })[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
};

const t = suite<{ svc: ReservationService; doc: Doc }>('query consistency');
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.doc = (await ctx.svc.api('GET', '/openapi.json')).body;
});
t.after(async ({ svc }) => svc.close());

const PREFIX = '/api/partner/v1';

function operations(doc: Doc): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'patch', 'put', 'delete'].includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

const resolve = (doc: Doc, p: Param | { $ref: string }): Param =>
  '$ref' in p ? (doc.components.parameters?.[p.$ref.split('/').at(-1) as string] as Param) : p;

/** A parameter listing its values: an enum, or a comma-separated list of them (`^(A|B)(,(A|B))*$`). */
const listsValues = (p: Param) =>
  Array.isArray(p.schema?.enum) || /^\^\(([A-Z_|]+)\)\(,\(\1\)\)\*\$$/.test(p.schema?.pattern ?? '');

const target = (path: string, query: string) =>
  `${path.startsWith(PREFIX) ? path.slice(PREFIX.length) : path}`.replace(/\{[^}]+\}/g, 'zz_any') + query;

t(
  'a value outside the listed ones is 400 invalid_enum on every query parameter that lists them',
  async ({ svc, doc }) => {
    const seen: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      if (method !== 'GET' || !path.startsWith(PREFIX)) continue;
      for (const p of (op.parameters ?? []).map((x) => resolve(doc, x))) {
        if (p.in !== 'query' || !listsValues(p)) continue;
        const res = await svc.api('GET', target(path, `?${p.name}=zz_not_a_value`), {
          token: TOKENS.full,
          invalid: true,
        });
        const issue = res.body.error?.details?.issues?.[0];
        assert.equal(
          [res.status, issue?.path, issue?.code],
          [400, p.name, 'invalid_enum'],
          `${path} ${p.name}`,
        );
        seen.push(`${op.operationId} ${p.name}`);
      }
    }
    // A pattern of alternatives this walk does not read as a list (another shape: lower case, a
    // separator other than a comma, a single value) would be skipped unnoticed: refused here, so a new
    // one is recognised above (and checked) or made an enum.
    const unread = operations(doc).flatMap(({ method, path, op }) =>
      method !== 'GET' || !path.startsWith(PREFIX)
        ? []
        : (op.parameters ?? [])
            .map((x) => resolve(doc, x))
            .filter((p) => p.in === 'query' && p.schema?.pattern?.includes('|') && !listsValues(p))
            .map((p) => `${op.operationId} ${p.name}: ${p.schema?.pattern}`),
    );
    assert.equal(unread, [], 'query parameters with a pattern of alternatives not read as a list');
    // The walk reached the ones this rule was written for.
    for (const known of [
      'listReservations status',
      'listWebhookDeliveries status',
      'listMissedCalls outcome',
    ])
      assert.ok(seen.includes(known), known);
  },
);

t('every list answering pagination.next_cursor takes it back as `cursor`', async ({ doc }) => {
  const lists = operations(doc).filter(({ method, op }) => {
    const schema = op.responses['200']?.content?.['application/json']?.schema as
      | { properties?: { pagination?: { properties?: Record<string, unknown> } } }
      | undefined;
    return method === 'GET' && schema?.properties?.pagination?.properties?.next_cursor !== undefined;
  });
  assert.ok(lists.length >= 3, lists.map((l) => l.op.operationId).join());
  for (const { op } of lists) {
    const names = (op.parameters ?? []).map((p) => resolve(doc, p)).filter((p) => p.in === 'query');
    assert.ok(
      names.some((p) => p.name === 'cursor'),
      `${op.operationId}: ${names.map((p) => p.name).join(', ')}`,
    );
  }
});

t(
  'webhook endpoint bodies refused by their own checks say "The request body is invalid"',
  async ({ svc }) => {
    const made = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: 'http://127.0.0.1:1/hook', enabled_events: ['*'] },
    });
    assert.is(made.status, 400, made.text);
    assert.is(made.body.error.message, 'The request body is invalid');
    const other = await svc.api('POST', '/webhook-endpoints', {
      token: TOKENS.full,
      body: { url: 'https://partner.example.com/hooks/query-consistency', enabled_events: ['*'] },
    });
    assert.is(other.status, 201, other.text);
    const patched = await svc.api('PATCH', `/webhook-endpoints/${other.body.data.id}`, {
      token: TOKENS.full,
      body: { url: 'http://127.0.0.1:1/hook' },
    });
    assert.is(patched.status, 400, patched.text);
    assert.is(patched.body.error.message, 'The request body is invalid');
  },
);

t.run();
