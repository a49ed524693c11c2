// The encodings the import's threads exchange (one string and its lengths instead of an object graph):
// the analysis worker's cells and analysed rows (src/customer-import/analysis.ts) and the log's writer
// thread's group of appends (src/adapters/event-store/sqlite-writes.ts) come back exactly as sent,
// whatever the text (empty strings, any Unicode, lone surrogates).
import * as fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeGroup, encodeGroup } from '../../src/adapters/event-store/sqlite-writes';
import { transferable } from '../../src/core/thread-text';
import { type AnalyzedRow, decodeCells, encodeCells, encodeRows } from '../../src/customer-import/analysis';
import { ANY, NO_STREAM, STREAM_EXISTS } from '../../src/ports/event-store';

// Objects as JSON and the decoders make them (uvu's equality compares prototypes).
const plain = { noNullPrototype: true } as const;
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constant(''),
);

test('cells: any rows of any strings decode as encoded', () => {
  fc.assert(
    fc.property(fc.array(fc.array(text, { maxLength: 12 }), { maxLength: 40 }), (rows) => {
      assert.equal(decodeCells(encodeCells(rows)), rows);
    }),
  );
});

test('analysed rows: each row parses back from its slice', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ row: fc.nat(), name: text, tags: fc.array(text) }, plain), { maxLength: 30 }),
      (rows) => {
        const { json, ends } = encodeRows(rows as unknown as AnalyzedRow[]);
        assert.is(ends.length, rows.length);
        rows.forEach((r, i) => {
          assert.equal(JSON.parse(json.slice(i === 0 ? 0 : ends[i - 1], ends[i])), r);
        });
      },
    ),
  );
});

test('a group of appends decodes as encoded', () => {
  const event = fc.record({ id: text, type: text, dataJson: text, metadataJson: text }, plain);
  const append = fc.record(
    {
      batch: fc.record(
        {
          stream: text,
          expected: fc.oneof(fc.nat(), fc.constant(NO_STREAM), fc.constant(STREAM_EXISTS), fc.constant(ANY)),
          events: fc.array(event, { maxLength: 5 }),
        },
        plain,
      ),
      created: text,
    },
    plain,
  );
  fc.assert(
    fc.property(fc.array(append, { maxLength: 20 }), (queue) => {
      const encoded = encodeGroup(queue);
      // As the thread receives it: a structured clone.
      assert.equal(decodeGroup(structuredClone(encoded)), queue);
    }),
  );
});

test('text goes to a thread as UTF-8 bytes (transferred) when well formed, as the string when it holds a lone surrogate', () => {
  const append = (data: string) => ({
    created: '2026-11-26T10:00:00.000Z',
    batch: {
      stream: 'customer-cus_1',
      expected: NO_STREAM,
      events: [{ id: 'e1', type: 'CustomerCreated', dataJson: data, metadataJson: '{}' }],
    },
  });
  const fine = encodeGroup([append('{"name":"Adé 🍽"}')]);
  assert.ok('bytes' in fine.text);
  const moved = transferable(fine.text);
  assert.is(moved.length, 1);
  const sent = structuredClone(fine, { transfer: moved });
  assert.is((moved[0] as ArrayBuffer).byteLength, 0, 'the buffer was transferred, not copied');
  assert.equal(decodeGroup(sent), [append('{"name":"Adé 🍽"}')]);
  const lone = encodeGroup([append('{"name":"\ud800"}')]);
  assert.ok('text' in lone.text, 'a lone surrogate: as the string');
  assert.equal(transferable(lone.text), []);
  assert.equal(decodeGroup(structuredClone(lone)), [append('{"name":"\ud800"}')]);
  // Cells (the CSV import's worker) likewise.
  const cells = encodeCells([['Adé', '🍽'], ['\udfff']]);
  assert.ok('text' in cells.text, 'a lone surrogate: as the string');
  assert.equal(decodeCells(structuredClone(cells)), [['Adé', '🍽'], ['\udfff']]);
  assert.ok('bytes' in encodeCells([['Adé', '🍽']]).text);
});

test.run();
