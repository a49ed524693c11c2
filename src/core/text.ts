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

/** Has a character other than whitespace (JavaScript's \s: the set String.prototype.trim removes). */
export const NOT_BLANK = /\S/;
export const BLANK_MESSAGE = 'must not be empty or only whitespace';
