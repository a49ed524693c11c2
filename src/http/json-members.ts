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

/**
 * The dotted path (`customer.name`, `table_ids.0.x`) of the first name an object of a JSON text gives
 * twice, at any depth, or null. JSON.parse keeps the last value silently, so `{"party_size":2,
 * "party_size":8}` booked 8 behind a 2xx while another reader of the same text (a proxy, a log, the
 * partner's own) saw 2: the partner API refuses such a body instead (src/http/server.ts). Only called
 * on text that parsed and passed the body guard (at most 32 levels: the recursion is bounded). On every
 * JSON body of a partner write: no string is built for a path until a name repeats.
 */
export function repeatedMemberPath(text: string): string | null {
  const scan: Scan = { text, at: 0, keys: [], slash: text.indexOf('\\') };
  return valueRepeats(scan) ? scan.keys.join('.') : null;
}

interface Scan {
  text: string;
  at: number;
  /** The names and indexes down to the value being read. */
  keys: string[];
  /** The next backslash at or after the string being read (-1: none left), looked for once. */
  slash: number;
}

const isSpaceCode = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 0xfeff;

function skipSpace(s: Scan): number {
  let c = s.text.charCodeAt(s.at);
  while (isSpaceCode(c)) c = s.text.charCodeAt(++s.at);
  return c;
}

/** Moves past the string literal at `s.at`; returns its decoded text when `decode`. */
function stringAt(s: Scan, decode: boolean): string {
  const { text } = s;
  const start = s.at;
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) {
      s.at = text.length;
      return '';
    }
    // A quote after an odd number of backslashes is part of the string.
    let slashes = 0;
    for (let k = quote - 1; k > start && text.charCodeAt(k) === 92; k--) slashes++;
    at = quote + 1;
    if (slashes % 2 === 0) break;
  }
  s.at = at;
  if (!decode) return '';
  if (s.slash >= 0 && s.slash < start) s.slash = text.indexOf('\\', start);
  if (s.slash < 0 || s.slash >= at) return text.slice(start + 1, at - 1);
  return JSON.parse(text.slice(start, at)) as string;
}

/** True when the value at `s.at` repeats a name; `s.keys` then holds its path. */
function valueRepeats(s: Scan): boolean {
  const c = skipSpace(s);
  if (c === 123 /* { */) {
    s.at++;
    // Most objects have a few names: a list is cheaper than a Set until it grows.
    let names: string[] | null = null;
    let many: Set<string> | null = null;
    for (;;) {
      if (skipSpace(s) !== 34 /* " */) {
        s.at++; // `}` of an empty object
        return false;
      }
      const name = stringAt(s, true);
      s.keys.push(name);
      if (many !== null) {
        if (many.has(name)) return true;
        many.add(name);
      } else if (names === null) names = [name];
      else if (names.includes(name)) return true;
      else if (names.length < 16) names.push(name);
      else {
        many = new Set(names);
        many.add(name);
      }
      skipSpace(s);
      s.at++; // `:`
      if (valueRepeats(s)) return true;
      s.keys.pop();
      const next = skipSpace(s);
      s.at++;
      if (next !== 44 /* , */) return false;
    }
  }
  if (c === 91 /* [ */) {
    s.at++;
    if (skipSpace(s) === 93 /* ] */) {
      s.at++;
      return false;
    }
    for (let index = 0; ; index++) {
      s.keys.push(String(index));
      if (valueRepeats(s)) return true;
      s.keys.pop();
      const next = skipSpace(s);
      s.at++;
      if (next !== 44) return false;
    }
  }
  if (c === 34) {
    stringAt(s, false);
    return false;
  }
  // A number, true, false or null: up to the next separator.
  const { text } = s;
  let d = c;
  while (s.at < text.length && d !== 44 && d !== 125 && d !== 93 && !isSpaceCode(d))
    d = text.charCodeAt(++s.at);
  return false;
}
