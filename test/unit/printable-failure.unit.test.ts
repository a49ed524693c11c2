// printableFailure turns anything a test throws into what uvu's failure printer can print (format() in
// uvu/dist/index.mjs reads err.name.startsWith, err.details.split, err.stack.indexOf and adds
// err.message to a string); test/unit/test-harness.unit.test.ts checks the printed result end to end.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ApiError } from '../../src/core/errors';
import { combinedFailure, headline, PrintableFailure, printableFailure } from '../harness/printable-failure';

/** What uvu's format() does with a thrown value, minus the colours: throws where it would. */
function uvuReads(err: Error & { details?: unknown; operator?: unknown }): string {
  const { details, operator = '' } = err;
  const idx = err.stack?.indexOf('\n');
  if (err.name.startsWith('AssertionError') && !(operator as string).includes('not')) return 'diff';
  let str = `${err.message}${operator ? `(${operator})` : ''}`;
  if (details) str += (details as string).split('\n').join('\n        ');
  if (idx !== undefined && idx !== -1) str += err.stack!.substring(idx);
  return str;
}

const hostile = (key: string) => {
  const e = new Error('hostile');
  Object.defineProperty(e, 'stack', {
    get: () => {
      throw new Error('stack getter');
    },
  });
  Object.defineProperty(e, key, {
    get: () => {
      throw new Error(`${key} getter`);
    },
  });
  return e;
};

const errorWith = fc
  .record(
    { message: fc.anything(), name: fc.anything(), details: fc.anything(), cause: fc.anything() },
    {
      requiredKeys: [],
    },
  )
  .map((props) => Object.assign(new Error('base'), props));

const thrown = fc.oneof(
  fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true, withDate: true }),
  errorWith,
  fc.constantFrom('message', 'name', 'details', 'cause').map(hostile),
  fc.array(errorWith, { maxLength: 3 }).map((errors) => new AggregateError(errors, 'several')),
  fc.constant(
    new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        getPrototypeOf: () => {
          throw new Error('trap');
        },
      },
    ),
  ),
);

const printable = suite('printableFailure');

printable('whatever is thrown, uvu can print the result and it says what was thrown', () => {
  fc.assert(
    fc.property(thrown, (value) => {
      const err = printableFailure(value);
      assert.type(err.name, 'string');
      assert.type(err.message, 'string');
      assert.type(err.stack, 'string');
      assert.type(uvuReads(err), 'string');
      assert.ok(err.message.length > 0);
    }),
    { numRuns: 300 },
  );
});

printable('an ApiError keeps its message and shows its details', () => {
  const err = printableFailure(
    new ApiError(409, 'RESOURCE_CONFLICT', 'Slot taken', { slot: { at: '19:00' } }),
  );
  assert.instance(err, PrintableFailure);
  assert.is(err.message, 'ApiError: Slot taken');
  assert.match((err as PrintableFailure).details, "details: { slot: { at: '19:00' } }");
  assert.match((err as PrintableFailure).details, /at .*printable-failure\.unit\.test\.ts/);
});

printable("uvu's own assertion errors pass unchanged, for uvu's diff", () => {
  try {
    assert.equal({ a: 1 }, { a: 2 });
  } catch (e) {
    assert.is(printableFailure(e), e);
    return;
  }
  assert.unreachable('assert.equal threw');
});

printable('a headline names what was thrown when it is not an Error', () => {
  assert.is(headline(null), 'null was thrown');
  assert.is(headline(undefined), 'undefined was thrown');
  assert.is(headline('x'), 'a string was thrown: x');
  assert.is(headline({ a: 1 }), 'Object was thrown');
  assert.is(headline(Object.create(null)), 'object was thrown');
  assert.is(headline(hostile('message')), 'Error: [message getter threw]');
});

printable('several failures of one test are one failure naming each', () => {
  const err = combinedFailure([
    { context: '', value: new Error('in the test') },
    { context: 'after.each hook', value: null },
  ]);
  assert.is(err.message, 'test: Error: in the test; after.each hook: null was thrown');
  assert.type(uvuReads(err), 'string');
});

printable.run();
