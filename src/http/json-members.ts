// The names given more than once at the top level of a JSON object's text. JSON.parse keeps the last
// value of a repeated name silently; where a repeated parameter must be refused (the OAuth token and
// revocation endpoints: RFC 6749 §3.2/§5.2, a form's repeated field is 400 invalid_request), the
// text the parser read is looked at again. Only called on text that parsed as a JSON object.

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/** The index just past the string literal starting at `i` (a `"`). */
function endOfString(text: string, i: number): number {
  let at = i + 1;
  while (at < text.length) {
    const c = text[at];
    if (c === '\\') at += 2;
    else if (c === '"') return at + 1;
    else at++;
  }
  return at;
}

/** The index just past the value starting at `i` (after any white space). */
function endOfValue(text: string, i: number): number {
  let at = i;
  while (isSpace(text[at])) at++;
  const first = text[at];
  if (first === '"') return endOfString(text, at);
  if (first === '{' || first === '[') {
    let depth = 0;
    while (at < text.length) {
      const c = text[at];
      if (c === '"') {
        at = endOfString(text, at);
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) return at + 1;
      }
      at++;
    }
    return at;
  }
  // A number, true, false or null: up to the next separator.
  while (at < text.length && !isSpace(text[at]) && text[at] !== ',' && text[at] !== '}') at++;
  return at;
}

/** Each name the top-level object of `text` gives more than once (decoded: `"\u0063ode"` is `code`). */
export function repeatedMembers(text: string): string[] {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  let at = 0;
  while (at < text.length && (isSpace(text[at]) || text[at] === '\uFEFF')) at++;
  if (text[at] !== '{') return [];
  at++;
  while (at < text.length) {
    while (isSpace(text[at])) at++;
    if (text[at] !== '"') break; // `}`: the end (or text that is not an object's: nothing to say)
    const end = endOfString(text, at);
    let name: string;
    try {
      name = JSON.parse(text.slice(at, end)) as string;
    } catch {
      break;
    }
    if (seen.has(name)) repeated.add(name);
    seen.add(name);
    at = end;
    while (isSpace(text[at])) at++;
    if (text[at] !== ':') break;
    at = endOfValue(text, at + 1);
    while (isSpace(text[at])) at++;
    if (text[at] !== ',') break;
    at++;
  }
  return [...repeated];
}
