// Character classes for the OpenAPI document's `pattern`s that read alike in the engines partners'
// generated validators compile them with: ECMA-262 without the u flag (OpenAPI 3.0.3 names ECMA-262
// 5.1, which has none), with it, Python's re, Go's RE2 and Java, and in .NET by the same constructs
// (not run here). \p{…} is the letter p without
// the u flag and an error in Python; \d, \s and \w mean all of Unicode to Python and .NET and ASCII (or
// another set) to the rest; RE2 has no \u escape. A class that lists its characters has one meaning.
// test/unit/openapi-patterns.unit.test.ts holds every pattern of the document to that (JS, Python and
// Java run; RE2's missing constructs read from the pattern).

import { NOT_BLANK } from '../core/text';

const hex2 = (c: number) => `\\x${c.toString(16).padStart(2, '0')}`;
const one = (c: number) => (c <= 0xff ? hex2(c) : String.fromCharCode(c));

/**
 * A class of the characters up to U+FFFF that `has` holds (`negated`: of every character but those).
 * Up to U+00FF each is a \xHH escape (ASCII punctuation needs none then), beyond it the character
 * itself. Surrogates and characters beyond U+FFFF are never listed: without the u flag such a character
 * is two surrogate units, elsewhere one code point, and either way none of them is in the list, so every
 * engine gives it the same verdict (outside the class).
 */
export function bmpClass(has: (ch: string) => boolean, negated = false): string {
  let out = '';
  let start = -1;
  for (let c = 0; c <= 0x10000; c++) {
    const held = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && has(String.fromCharCode(c));
    if (held && start < 0) start = c;
    if (!held && start >= 0) {
      const end = c - 1;
      out +=
        end === start ? one(start) : end === start + 1 ? one(start) + one(end) : `${one(start)}-${one(end)}`;
      start = -1;
    }
  }
  return `[${negated ? '^' : ''}${out}]`;
}

const UNASSIGNED = /\p{Cn}/u;

/**
 * The free-text rule (NOT_BLANK: a character that is not a mark, control, format, private-use,
 * unassigned, surrogate or separator code point nor a Hangul filler) as the document states it: a
 * character up to U+FFFF that is not one of the blank assigned ones. Looser than the server's rule
 * exactly where no portable pattern can follow it: characters beyond U+FFFF (tag characters,
 * supplementary marks and variation selectors), unassigned code points and lone surrogates (never
 * listed, see bmpClass; the body guard refuses them first, invalid_encoding) pass it. Unassigned ones
 * are left out of the list on purpose: a partner's copy of the pattern must not refuse a character a
 * later Unicode assigns and the server, updated, takes.
 */
export const NOT_BLANK_DOCUMENTED = bmpClass((ch) => !NOT_BLANK.test(ch) && !UNASSIGNED.test(ch), true);

/** Any character but JS's \s (white space and line terminators, all of them up to U+FFFF), spelled out. */
export const NOT_WHITE_SPACE_CLASS = bmpClass((ch) => /\s/.test(ch), true);

/** What the document's description says of its patterns. */
export const PATTERNS_NOTE =
  "Every `pattern` reads the same as ECMA-262 with or without the u flag, in Python's re, Go's regexp (RE2) and Java, and uses only constructs .NET reads the same way: character classes list their characters (no \\d, \\s, \\w or \\p{…}; \\xHH up to U+00FF and the characters themselves beyond, as RE2 has no \\u escape), with no lookaround or backreference. Where a rule cannot be said so, the pattern is looser, and in a request the server refuses the rest with a 400 naming the field: " +
  "(1) Python's, Java's and .NET's `$` also matches before a final line feed (Java's before any final line break), so there a value ending in one passes a pattern ending in `$`; " +
  '(2) the free-text rule (a visible character: not a Unicode mark, control, format, private-use, unassigned or separator code point, nor a Hangul filler) is listed for the characters up to U+FFFF that Unicode has assigned, so a text with no visible character but one beyond U+FFFF (a tag character, a supplementary variation selector) or an unassigned code point passes the pattern and gets `invalid_format`; a text holding a lone surrogate (half of a pair, `\\ud800` alone) passes it too, and the server refuses it with `invalid_encoding`.';
