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

/**
 * Has a character that shows: not whitespace (JavaScript's \s, the set String.prototype.trim removes),
 * not a control character, not an invisible formatting character (zero-width spaces and joiners,
 * direction marks and overrides, soft hyphen, Hangul fillers, variation selectors, BOM) and not a
 * combining mark alone. A name of NUL or of a zero-width space was stored and showed as nothing on
 * every reservation. Written without the `u` flag, so it is the same pattern in openapi.json: an astral
 * character is two code units outside the class, so it counts as showing.
 */
export const NOT_BLANK =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: the class lists code points, combining marks alone among them (a name of a lone mark shows nothing); no sequence is meant
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it counts as showing nothing
  /[^\s\u0000-\u001f\u007f-\u009f\u00ad\u0300-\u036f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u20d0-\u20ff\u3164\ufe00-\ufe0f\ufe20-\ufe2f\ufeff\uffa0\ufff0-\ufffb]/;
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
