// Every route's input validation names the offending field: break one field of a valid input (from
// the route's own declarations) and the 400 carries exactly one issue path, that field's dotted path.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError, type Issue } from '../../src/core/errors';
import { partnerRoutes } from '../../src/http/routes/index';
import { testClockRoute } from '../../src/http/routes/meta';
import { createBody, patchBody } from '../../src/http/routes/reservation-schemas';
import type { AnySchema } from '../../src/http/schema';
import { validateInput } from '../../src/http/validate';
import {
  DELETE,
  inputsOf,
  isClosedAt,
  leaves,
  objectPaths,
  validValues,
  type Where,
  withValue,
  wrongKind,
} from '../helpers/schema-values';

const t = suite('issue paths');

function issues(value: unknown, schema: AnySchema, where: Where): Issue[] | null {
  try {
    validateInput(value, schema, where);
    return null;
  } catch (e) {
    assert.instance(e, ApiError);
    assert.is((e as ApiError).status, 400);
    return ((e as ApiError).details?.issues ?? []) as Issue[];
  }
}

const routes = [...partnerRoutes(), testClockRoute];

for (const route of routes) {
  for (const [where, schema] of inputsOf(route)) {
    const name = `${route.method} ${route.path} ${where}`;
    t(`${name}: one broken field, one issue at its path`, () => {
      const bases = [...validValues(schema.json, where), ...validValues(schema.json, where, true)];
      assert.ok(bases.length > 0);
      let checked = 0;
      for (const base of bases) {
        assert.is(issues(base, schema, where), null, `${name}: ${JSON.stringify(base)} should be valid`);
        for (const leaf of leaves(base)) {
          const dotted = leaf.path.join('.');
          const broken = withValue(base, leaf.path, wrongKind(leaf.value, where));
          const found = issues(broken, schema, where);
          assert.ok(found, `${name}: ${dotted} of the wrong kind passed`);
          assert.equal(
            [...new Set(found?.map((i) => i.path))],
            [dotted],
            `${name}: ${dotted} wrong: ${JSON.stringify(found)}`,
          );
          const removed = issues(withValue(base, leaf.path, DELETE), schema, where);
          // A required field (every field of a minimal value is, except a chosen optional object). In a
          // union the object may then read as another member, whose own required field is named: {}
          // for a customer is inline details without a name.
          if (removed) {
            const parent = leaf.path.slice(0, -1).join('.');
            assert.equal(removed.length, 1, `${name}: ${dotted} removed: ${JSON.stringify(removed)}`);
            assert.is(removed[0]?.code, 'required');
            const at = removed[0]?.path ?? '';
            assert.ok(
              at === dotted ||
                (leaf.path.length > 1 &&
                  at.startsWith(`${parent}.`) &&
                  !at.slice(parent.length + 1).includes('.')),
              `${name}: ${dotted} removed: ${JSON.stringify(removed)}`,
            );
          }
          checked++;
        }
        for (const at of objectPaths(base)) {
          if (!isClosedAt(schema.json, base, at)) continue;
          const key = [...at, 'zz_unknown'];
          const found = issues(withValue(base, key, 'x'), schema, where);
          assert.equal(
            found?.map((i) => `${i.path}:${i.code}`),
            [`${key.join('.')}:unknown_property`],
            `${name}: unknown property in ${at.join('.') || 'the root'}`,
          );
          checked++;
        }
      }
      assert.ok(checked > 0, `${name}: nothing was checked`);
    });
  }
}

t('an inline reservation customer without a name: the issue is customer.name', () => {
  const base = { party_size: 2, start_at: '2026-06-03T19:00:00+02:00' };
  assert.equal(issues({ ...base, customer: { email: 'a@b.co' } }, createBody, 'body'), [
    { path: 'customer.name', code: 'required', message: 'customer.name is required' },
  ]);
  // Every faulty field of the inline customer at once, each at its own path.
  const many = issues({ ...base, customer: { email: 'nope', lang: 'xx', tags: [''] } }, createBody, 'body');
  assert.equal(many?.map((i) => i.path).sort(), [
    'customer.email',
    'customer.lang',
    'customer.name',
    'customer.tags.0',
  ]);
  // {id} links: nothing else may come with it, and the extra field is named.
  assert.equal(issues({ ...base, customer: { id: 'cus_1', name: 'Ana' } }, createBody, 'body'), [
    {
      path: 'customer.name',
      code: 'unknown_property',
      message:
        'customer.name is not allowed here: {id} alone links an existing customer of this restaurant; inline details go without id',
    },
  ]);
  assert.equal(issues({ ...base, customer: { id: 'cus_1' } }, createBody, 'body'), null);
  assert.equal(issues({ ...base, customer: 'cus_1' }, createBody, 'body'), [
    { path: 'customer', code: 'invalid_type', message: 'customer must be an object, not a string' },
  ]);
  assert.equal(
    issues({ customer: { id: 7 } }, patchBody, 'body')?.map((i) => i.path),
    ['customer.id'],
  );
  assert.equal(issues({ customer: { note: 'x' } }, patchBody, 'body'), null);
});

t('a union names the member that was meant: custom field values', () => {
  const route = routes.find((r) => r.operationId === 'updateCustomer');
  const body = route?.body as AnySchema;
  assert.equal(issues({ custom_fields: { cf_1: ['a', 3] } }, body, 'body'), [
    {
      path: 'custom_fields.cf_1.1',
      code: 'invalid_type',
      message: 'custom_fields.cf_1.1 must be a string, not an integer',
    },
  ]);
  const wrong = issues({ custom_fields: { cf_1: { a: 1 } } }, body, 'body');
  assert.equal(wrong?.length, 1);
  assert.equal(wrong?.[0]?.path, 'custom_fields.cf_1');
  assert.match(wrong?.[0]?.message ?? '', /must be a string, a number, true or false or an array of strings/);
});

t.run();
