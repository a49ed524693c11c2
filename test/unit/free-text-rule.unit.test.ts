// The one rule for free text (src/core/text.ts, docs/CONTRIBUTING.md "Input values"): a text the API
// says holds something refuses one with no visible character; a clearable text stores it as null;
// tags keep one of each, in order.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkBounds } from '../../commands/customers/bounds';
import type { ApiError } from '../../src/core/errors';
import { blankAsNull, distinctInOrder, NOT_BLANK } from '../../src/core/text';
import { missedCallBody } from '../../src/http/routes/missed-calls';
import { cancelBody } from '../../src/http/routes/reservation-schemas';
import { createEndpointBody, updateEndpointBody } from '../../src/http/routes/webhook-schemas';
import type { Schema } from '../../src/http/schema';
import { validateInput } from '../../src/http/validate';

const t = suite('free text rule');
const BLANKS = [' ', '', '\t\n', '\u200b', '\u00a0\u3000', '\u0000', '\ufeff'];

const refusedAt = <T>(body: unknown, schema: Schema<T>): string[] => {
  try {
    validateInput(body, schema, 'body');
    return [];
  } catch (e) {
    return (((e as ApiError).details?.issues ?? []) as { path: string }[]).map((i) => i.path);
  }
};

t('blankAsNull: null for a text with no visible character, the text itself otherwise', () => {
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(' ', '\t', '\u200b', 'a', '😀', '\u0301') }), (v) => {
      assert.is(blankAsNull(v), NOT_BLANK.test(v) ? v : null);
    }),
  );
  assert.is(blankAsNull(null), null);
});

t('distinctInOrder keeps the first of each, in order', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom('a', 'b', 'c', 'vip')), (list) => {
      const out = distinctInOrder(list);
      assert.is(new Set(out).size, out.length);
      assert.equal(new Set(out), new Set(list));
      assert.equal(
        out,
        list.filter((v, i) => list.indexOf(v) === i),
      );
    }),
  );
});

t("a webhook endpoint's blank description is stored as null, on creation and update", () => {
  for (const description of BLANKS) {
    const created = validateInput({ url: 'https://example.com/h', description }, createEndpointBody, 'body');
    assert.is(created.description, null, JSON.stringify(description));
    assert.is(validateInput({ description }, updateEndpointBody, 'body').description, null);
  }
  assert.is(validateInput({ description: ' mine ' }, updateEndpointBody, 'body').description, ' mine ');
});

t("a blank missed call's external_call_id and a blank cancellation reason are refused", () => {
  for (const v of BLANKS) {
    assert.equal(refusedAt({ caller_phone_number: '+33612345678', external_call_id: v }, missedCallBody), [
      'external_call_id',
    ]);
    assert.equal(refusedAt({ reason: v }, cancelBody), ['reason']);
  }
});

t('the write side (CSV import, CLI) refuses a blank external_id or tag as the HTTP schema does', () => {
  for (const v of BLANKS.filter((b) => b !== '')) {
    assert.equal(
      checkBounds({ external_id: v, tags: ['ok', v] }).map((i) => `${i.path}:${i.code}`),
      ['external_id:invalid_format', 'tags.1:invalid_format'],
      JSON.stringify(v),
    );
  }
});

t.run();
