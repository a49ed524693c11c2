// How the API measures and judges text, shared by the HTTP schemas and the write side so that both
// refuse the same values with the same words.

/** Length in characters (Unicode code points: an emoji is one), as the spec and JSON Schema count it. */
export function charCount(v: string): number {
  let n = v.length;
  for (let i = 0; i < v.length - 1; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = v.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The sentence a length bound is refused with. */
export function lengthMessage(min: number | undefined, max: number | undefined): string {
  if (min !== undefined && max !== undefined) return `must be ${min} to ${max} characters`;
  if (max !== undefined) return `must be at most ${max} characters`;
  return `must be at least ${min} character${min === 1 ? '' : 's'}`;
}

/** The Hangul fillers (U+115F, U+1160, U+3164, U+FFA0): letters by their Unicode category, blank on screen. */
const HANGUL_FILLERS = String.fromCodePoint(0x115f, 0x1160, 0x3164, 0xffa0);

/**
 * Has a character that shows: one that is not a mark (\p{M}: a combining mark alone shows nothing),
 * not a control, format, private-use, unassigned or surrogate code point (\p{C}: NUL, zero-width
 * space and joiners, direction marks, soft hyphen, BOM, tag characters, Arabic number signs), not a
 * separator (\p{Z}) and not a Hangul filler; whitespace such as tab is \p{C} too. Said by Unicode
 * property rather than by a list of code points, so that the marks, format characters and variation
 * selectors of every script and plane are covered. A name of NUL or of a zero-width space was stored
 * and showed as nothing on every reservation. The document cannot publish this regex (without the u
 * flag, which partners' validators mostly lack, \p is the letter p; Python's re refuses it): it states
 * the rule by listing the characters (NOT_BLANK_DOCUMENTED, src/http/portable-pattern.ts).
 */
export const NOT_BLANK = new RegExp(`[^\\p{M}\\p{C}\\p{Z}${HANGUL_FILLERS}]`, 'u');
export const BLANK_MESSAGE =
  'must hold a visible character (not only whitespace, control or invisible formatting characters)';

/**
 * Free text that may be cleared (a note, a reservation's custom_message or allergies) stores a value
 * with no visible character as null: it shows nothing, and the same empty field answered "" or " " or
 * null depending on how it was cleared.
 */
export const blankAsNull = (v: string | null): string | null => (v === null || NOT_BLANK.test(v) ? v : null);

/** One of each, in the order first given: tags, on customers and reservations alike. */
export const distinctInOrder = (list: readonly string[]): string[] => [...new Set(list)];
