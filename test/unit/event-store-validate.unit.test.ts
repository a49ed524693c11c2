// Properties of the shared input checks: every JSON object is accepted and stored exactly; any
// value JSON cannot carry, anywhere in the payload, is refused.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { prepareAppend, uuidv7 } from '../../src/adapters/event-store/validate';
import { ANY, InvalidEventStoreInputError } from '../../src/ports/event-store';

const key = fc.string().filter((k) => k !== '__proto__');
const json = fc.jsonValue({ maxDepth: 4 });
const object = fc.dictionary(key, json, { maxKeys: 6 });

test('any JSON object is accepted and its stored text parses back to it', () => {
  fc.assert(
    fc.property(object, object, (data, metadata) => {
      const meta = Object.fromEntries(Object.entries(metadata).filter(([k]) => !k.startsWith('$')));
      delete meta.restaurant_id;
      for (const k of ['actor', 'request_id', 'correlation_id', 'causation_id']) delete meta[k];
      const [event] = prepareAppend('s', [{ type: 'T', data, metadata: meta }], ANY).events;
      // structuredClone: fast-check builds some objects without a prototype; JSON.parse never does.
      assert.equal(JSON.parse(event!.dataJson), structuredClone(data));
      assert.equal(JSON.parse(event!.metadataJson), structuredClone(meta));
    }),
  );
});

const poison = fc.constantFrom<unknown>(
  Number.NaN,
  Number.POSITIVE_INFINITY,
  () => 1,
  10n,
  Symbol('s'),
  new Date(0),
  new Map(),
  [undefined],
);

/** Puts `value` somewhere inside `data`, at a path chosen by `path`. */
function plant(data: Record<string, unknown>, path: number[], value: unknown): Record<string, unknown> {
  let node: Record<string, unknown> | unknown[] = data;
  for (const step of path) {
    const child = step % 2 === 0 ? {} : [];
    if (Array.isArray(node)) node.push(child);
    else node[`k${step}`] = child;
    node = child;
  }
  if (Array.isArray(node)) node.push(value);
  else node.bad = value;
  return data;
}

test('a value JSON cannot carry is refused wherever it hides', () => {
  fc.assert(
    fc.property(object, fc.array(fc.nat(9), { maxLength: 5 }), poison, (data, path, value) => {
      const planted = plant(structuredClone(data), path, value);
      assert.throws(
        () => prepareAppend('s', [{ type: 'T', data: planted }], ANY),
        (e: unknown) => e instanceof InvalidEventStoreInputError,
      );
    }),
  );
});

test('generated ids are version 7 UUIDs ordered by time', () => {
  const early = uuidv7(Date.UTC(2026, 0, 1));
  const late = uuidv7(Date.UTC(2026, 0, 2));
  assert.match(early, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(early < late);
  assert.is(new Set(Array.from({ length: 2000 }, () => uuidv7())).size, 2000);
  const [e] = prepareAppend('s', [{ type: 'T', data: {} }], ANY).events;
  assert.match(e!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
});

test('a refusal names where the bad value is', () => {
  const refused = (data: Record<string, unknown>) => {
    try {
      prepareAppend(
        's',
        [
          { type: 'T', data },
          { type: 'T', data },
        ],
        ANY,
      );
    } catch (err) {
      assert.instance(err, InvalidEventStoreInputError);
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  assert.match(refused({ a: [1, { b: Number.NaN }] }), /events\[0\]\.data\.a\[1\]\.b is NaN/);
  assert.match(refused({ ok: { x: 1 }, list: [2, undefined] }), /events\[0\]\.data\.list\[1\] is undefined/);
  const self: Record<string, unknown> = { n: 1 };
  self.again = { deeper: self };
  assert.match(refused({ self }), /events\[0\]\.data\.self\.again\.deeper refers back/);
});

test.run();
