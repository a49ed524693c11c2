// The document's spelled-out classes (src/http/portable-pattern.ts) against the server's own rules: the
// published pattern never refuses what the server takes, and is looser only where it says so.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { NOT_BLANK } from '../../src/core/text';
import {
  bmpClass,
  NOT_BLANK_DOCUMENTED,
  NOT_WHITE_SPACE_CLASS,
  PATTERNS_NOTE,
} from '../../src/http/portable-pattern';

const t = suite('portable pattern');

const BMP: string[] = [];
for (let c = 0; c <= 0xffff; c++) if (c < 0xd800 || c > 0xdfff) BMP.push(String.fromCharCode(c));
const UNASSIGNED = /\p{Cn}/u;

/** Text from blank characters of every kind, a few visible ones, and planes beyond U+FFFF. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u00ad', '\u0301', '\u200b', '\u2028', '\u3164', '\ufeff'),
    fc.constantFrom('\u{e0020}', '\u{e0100}', '\u{1d173}', '\u{f0000}', '\u{50000}', '\ud800', '\udc00'),
    fc.constantFrom('a', 'p', 'M', 'é', '中', '😀', '\u{1f3fb}'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 8,
});

t('bmpClass writes ranges, \\xHH up to U+00FF and the characters themselves beyond', () => {
  const wanted = new Set(['\t', '\n', '\u000b', '-', ']', '\u00e9', '\u0100', '\u0101', '\u0102', '\u4e2d']);
  assert.is(
    bmpClass((ch) => wanted.has(ch)),
    '[\\x09-\\x0b\\x2d\\x5d\\xe9\u0100-\u0102\u4e2d]',
  );
  assert.is(
    bmpClass((ch) => ch === '\u0100' || ch === '\u0101', true),
    '[^\u0100\u0101]',
  );
  // Surrogates are never listed: without the u flag they would cut characters beyond U+FFFF in two.
  assert.is(
    bmpClass((ch) => ch >= '\ud7ff' && ch <= '\ue000'),
    '[\ud7ff\ue000]',
  );
});

t("the free-text pattern takes every text the server's rule takes", () => {
  const documented = new RegExp(NOT_BLANK_DOCUMENTED);
  for (const ch of BMP) if (NOT_BLANK.test(ch)) assert.ok(documented.test(ch), JSON.stringify(ch));
  fc.assert(
    fc.property(text, (v) => {
      if (NOT_BLANK.test(v)) assert.ok(documented.test(v), JSON.stringify(v));
    }),
    { numRuns: 2000 },
  );
});

t('up to U+FFFF it refuses every blank character the server refuses, but unassigned ones', () => {
  const documented = new RegExp(NOT_BLANK_DOCUMENTED);
  const apart = BMP.filter((ch) => documented.test(ch) !== NOT_BLANK.test(ch));
  assert.ok(apart.length > 0, 'the unassigned code points are expected apart');
  for (const ch of apart) assert.ok(UNASSIGNED.test(ch), `U+${ch.charCodeAt(0).toString(16)}`);
  for (const v of ['\u200b\u200b', ' \u00a0\u3000', 'e\u0301'.slice(1), '\u3164\ufeff', '\x00'])
    assert.not.ok(documented.test(v), JSON.stringify(v));
  // Beyond U+FFFF the server alone refuses (the document's description says so).
  assert.ok(documented.test('\u{e0020}\u{e0041}'));
  assert.not.ok(NOT_BLANK.test('\u{e0020}\u{e0041}'));
  assert.match(PATTERNS_NOTE, 'beyond U+FFFF');
  assert.match(PATTERNS_NOTE, 'unassigned code point');
  // A lone surrogate too (never listed), with or without the u flag: said as well.
  for (const half of ['\ud800', '\udfff']) {
    assert.ok(documented.test(half) && new RegExp(NOT_BLANK_DOCUMENTED, 'u').test(half));
    assert.not.ok(NOT_BLANK.test(half));
  }
  assert.match(PATTERNS_NOTE, 'lone surrogate');
});

t("the no-white-space class is exactly JS's \\s", () => {
  const anchored = new RegExp(`^${NOT_WHITE_SPACE_CLASS}+$`);
  for (const ch of BMP) assert.is(anchored.test(ch), !/\s/.test(ch), JSON.stringify(ch));
  fc.assert(
    fc.property(text, (v) => {
      assert.is(anchored.test(v), v !== '' && !/\s/.test(v), JSON.stringify(v));
    }),
    { numRuns: 2000 },
  );
});

t.run();
