// Names a JSON object's text gives more than once. JSON.parse keeps the last value of a repeated name
// silently: the partner API refuses a body that repeats one at any depth (`scanJsonText`), and the
// OAuth token and revocation endpoints one that repeats a parameter at the top level (`repeatedMembers`:
// RFC 6749 §3.2/§5.2, a form's repeated field is 400 invalid_request). One scanner reads both (its
// `deep` mode), so the two never read a text differently. Only called on text that parsed as JSON.

/**
 * Each name the top-level object of `text` gives more than once (decoded: `"\u0063ode"` is `code`);
 * names inside its values are not looked at. [] for text that is not an object.
 */
export function repeatedMembers(text: string): string[] {
  const s: Scan = { text, at: 0, keys: [], slash: text.indexOf('\\'), deep: false };
  const seen = new Set<string>();
  const repeated = new Set<string>();
  if (skipSpace(s) !== 123 /* { */) return [];
  s.at++;
  while (skipSpace(s) === 34 /* " */) {
    const name = stringAt(s, true);
    if (seen.has(name)) repeated.add(name);
    seen.add(name);
    if (skipSpace(s) !== 58 /* : */) break;
    s.at++;
    valueRepeats(s); // not deep: moves past the value
    if (skipSpace(s) !== 44 /* , */) break;
    s.at++;
  }
  return [...repeated];
}

/**
 * One walk of a JSON text (parsed, within the body guard's bounds) for what only the text shows:
 * `repeated`, the dotted path (`customer.name`, `table_ids.0.x`) of the first name an object of it
 * gives twice, at any depth, or null (JSON.parse keeps the last value silently, so `{"party_size":2,
 * "party_size":8}` booked 8 behind a 2xx while another reader of the same text saw 2: the partner API
 * refuses such a body instead, src/http/server.ts; no string is built for a path until a name
 * repeats); `unsafeInteger`, the dotted path of the first number written as a
 * plain integer (no `.`, `e` or `E`) beyond ±2^53-1 (9007199254740993 reads back 9007199254740992), or
 * null. A number written with a fraction or an exponent (1e16, 6.02e23, 1e308) is the double it says.
 * When a name repeats, the walk stops there: `unsafeInteger` covers only the text before it.
 */
export function scanJsonText(text: string): {
  repeated: string | null;
  unsafeInteger: string | null;
  /** The names and indexes of `unsafeInteger`'s path, one by one (a name may hold a `.`). */
  unsafeKeys: string[] | null;
} {
  const scan: Scan = { text, at: 0, keys: [], slash: text.indexOf('\\'), deep: true, unsafe: null };
  const repeated = valueRepeats(scan) ? scan.keys.join('.') : null;
  const unsafeKeys = scan.unsafe ?? null;
  return { repeated, unsafeInteger: unsafeKeys === null ? null : unsafeKeys.join('.'), unsafeKeys };
}

interface Scan {
  text: string;
  at: number;
  /** The names and indexes down to the value being read. */
  keys: string[];
  /** The next backslash at or after the string being read (-1: none left), looked for once. */
  slash: number;
  /** Look for repeated names inside values (any depth); false: only move past each value. */
  deep: boolean;
  /** The names and indexes down to the first unsafe plain integer met (deep mode only). */
  unsafe?: string[] | null;
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
      if (!s.deep) {
        stringAt(s, false);
        skipSpace(s);
        s.at++; // `:`
        valueRepeats(s);
        const next = skipSpace(s);
        s.at++;
        if (next !== 44 /* , */) return false;
        continue;
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
      if (!s.deep) valueRepeats(s);
      else {
        s.keys.push(String(index));
        if (valueRepeats(s)) return true;
        s.keys.pop();
      }
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
  const start = s.at;
  let d = c;
  while (s.at < text.length && d !== 44 && d !== 125 && d !== 93 && !isSpaceCode(d))
    d = text.charCodeAt(++s.at);
  // 16 characters or more (a sign and 16 digits at least past 2^53-1): only then is it looked at.
  if (s.unsafe === null && s.at - start > 15 && unsafeIntegerToken(text.slice(start, s.at)))
    s.unsafe = [...s.keys];
  return false;
}

/** A number token written as a plain integer (digits, an optional `-`) whose value is not exact. */
function unsafeIntegerToken(token: string): boolean {
  if (!/^-?\d+$/.test(token)) return false;
  return !Number.isSafeInteger(Number(token));
}
