// Bounds on a parsed request body, checked before validation, and the answer to a body that did not
// parse. A body within the byte limit can still nest thousands of levels deep (V8 parses it, but
// anything recursive after it overflows the stack) or hold keys that reach for Object.prototype; both
// answer 400 in the envelope here, never 500. So does text that is not Unicode: a JSON escape of half a
// surrogate pair ("\ud800" alone) parses to a string UTF-8 cannot carry. Stored, it came back in every
// response as that same lone escape, which strict JSON readers refuse (serde_json, System.Text.Json):
// one such name made a sync feed page unreadable, with the cursor past it inside the unreadable page.
import { ApiError, type Issue, validationError } from '../core/errors';
import { scanJsonText } from './json-members';
import type { JsonSchema } from './schema';
import { unsafeIntegerAdvice } from './unsafe-integer-advice';

export interface BodyLimits {
  /** Nested objects and arrays; the body itself is level 1. Our deepest schema needs 4. */
  depth: number;
  /** Items in one array (declared arrays are bounded lower by their schemas). */
  arrayItems: number;
  /** Properties of one object (metadata and custom_fields are open records). */
  objectKeys: number;
  /** Characters in one string or property name (the longest declared string is 10,000). */
  stringChars: number;
}

export const BODY_LIMITS: Readonly<BodyLimits> = Object.freeze({
  depth: 32,
  arrayItems: 1_000,
  objectKeys: 1_000,
  stringChars: 100_000,
});

/**
 * Property names refused anywhere in a body: `__proto__` would replace an object's prototype when
 * assigned, and `constructor`/`prototype` reach Object's own machinery through any plain-object lookup.
 */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string;
}

const pathOf = (f: Frame | null): string => {
  const keys: string[] = [];
  for (let at = f; at?.parent; at = at.parent) keys.push(at.key);
  return keys.reverse().join('.');
};

/**
 * Throws 400 (VALIDATION_ERROR, one issue at the offending path) when the body breaks a bound.
 * Iterative, with an explicit stack: a walk by recursion would itself overflow on the bodies it is
 * meant to refuse.
 */
export function guardBody(body: unknown, limits: BodyLimits = BODY_LIMITS): void {
  const issue = checkBody(body, limits);
  if (issue) throw validationError([issue], 'The request body is invalid');
}

export function checkBody(body: unknown, limits: BodyLimits = BODY_LIMITS): Issue | null {
  // No body at all is the route's business (an empty object, or 400 when a body is required).
  if (body === undefined) return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { path: '', code: 'invalid_type', message: `body must be a JSON object, not ${kindOf(body)}` };
  const stack: Frame[] = [{ value: body, depth: 1, parent: null, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const v = frame.value;
    if (typeof v === 'string') {
      if (v.length > limits.stringChars)
        return tooLong(pathOf(frame), `a string of at most ${limits.stringChars} characters`);
      if (!wellFormed(v)) return loneSurrogate(pathOf(frame));
      continue;
    }
    // JSON.parse reads a number past the double range (1e400) as Infinity, which no JSON can carry
    // back: inside an open value (a reservation's metadata) it reached the event log and answered 500.
    // (An integer written past 2^53 is judged on the text, where it is written: refuseRepeatedMembers.)
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return notFinite(pathOf(frame));
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (frame.depth > limits.depth)
      return {
        path: pathOf(frame),
        code: 'too_deep',
        message: `${pathOf(frame) || 'body'} nests deeper than ${limits.depth} levels of objects and arrays`,
      };
    if (Array.isArray(v)) {
      if (v.length > limits.arrayItems)
        return tooLong(pathOf(frame), `an array of at most ${limits.arrayItems} items`);
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], depth: frame.depth + 1, parent: frame, key: String(i) });
      continue;
    }
    const keys = Object.keys(v);
    if (keys.length > limits.objectKeys)
      return tooLong(pathOf(frame), `an object of at most ${limits.objectKeys} properties`);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const child: Frame = { value: undefined, depth: frame.depth + 1, parent: frame, key };
      if (FORBIDDEN_KEYS.has(key))
        return {
          path: pathOf(child),
          code: 'forbidden_property',
          message: `${key} is not allowed as a property name`,
        };
      if (key.length > limits.stringChars)
        return tooLong(pathOf(frame), `property names of at most ${limits.stringChars} characters`);
      if (!wellFormed(key)) return loneSurrogate(pathOf({ ...child, key: escapeHalves(key) }));
      // A getter cannot come out of JSON.parse or a form parser; read plainly.
      child.value = (v as Record<string, unknown>)[key];
      stack.push(child);
    }
  }
  return null;
}

/** The end of every "given more than once" message (a query parameter's may add how lists are given). */
export const GIVEN_ONCE = '; give it once';

/**
 * One rule for a name given twice, in a JSON object of the body (at any depth) or in the query string:
 * issue `duplicate_property` at its path, one wording. Issue codes name the mistake; the path says
 * where. `path` is the dotted path ('' for an empty name at the body's top level).
 */
export const givenTwice = (path: string): Issue => ({
  path,
  code: 'duplicate_property',
  message: `${path === '' ? 'The property "" of body' : path} is given more than once${GIVEN_ONCE}`,
});

/**
 * 400 `duplicate_property` at the path of a name an object of the JSON text gives twice, at any depth:
 * JSON.parse keeps the last value without a word, so `{"party_size":2,"party_size":8}` booked 8 behind
 * a 2xx, where a repeated query parameter is refused. `text` is the body as parsed (koa-body's rawBody).
 * Also 400 `out_of_range` at the path of a number written as a plain integer (no `.`, `e`, `E`) beyond
 * ±2^53-1 (I-JSON, RFC 7493 §2.2): a POS id 9007199254740993 in metadata came back 9007199254740992,
 * behind a 201. A number written with a fraction or exponent (1e16, 6.02e23) is the double it says.
 * `names: false` checks the integers only (the OAuth endpoints refuse repeated parameters their way).
 */
export function refuseRepeatedMembers(text: unknown, names = true, schema?: JsonSchema): void {
  if (typeof text !== 'string') return;
  const { repeated, unsafeInteger: unsafe, unsafeKeys } = scanJsonText(text);
  if (names && repeated !== null)
    throw validationError([givenTwice(repeated)], 'The request body is invalid');
  if (unsafe !== null)
    throw validationError(
      [unsafeInteger(unsafe, unsafeIntegerAdvice(schema ?? {}, unsafeKeys ?? []))],
      'The request body is invalid',
    );
}

/**
 * An operator's JSON document (`catalog apply`'s file, BOOTSTRAP_FILE) read by the rules a partner's
 * body is: no name given twice in one object (JSON.parse kept the last of `"max_pax":2,"max_pax":20`
 * without a word, where the partner API refuses it), no prototype keys, no half of a surrogate pair, at
 * most 32 levels (so that scanner's recursion stays bounded), no integer written past ±2^53-1; its size
 * is the file's own business.
 * Throws a SyntaxError for text that is not JSON and an Error saying where for a broken rule; a value
 * that is not an object is returned for the caller to refuse in its words.
 */
export function parseJsonDocument(text: string): unknown {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const issue = checkBody(value, DOCUMENT_LIMITS);
  if (issue) throw new Error(issue.message);
  const { repeated: twice, unsafeInteger: unsafe } = scanJsonText(text);
  if (twice !== null)
    throw new Error(
      `${twice === '' ? 'the name ""' : twice} is given more than once in one object (JSON would keep its last value only)${GIVEN_ONCE}`,
    );
  if (unsafe !== null) throw new Error(unsafeInteger(unsafe, unsafeIntegerAdvice(undefined, [])).message);
  return value;
}

const DOCUMENT_LIMITS: Readonly<BodyLimits> = Object.freeze({
  depth: BODY_LIMITS.depth,
  arrayItems: Number.POSITIVE_INFINITY,
  objectKeys: Number.POSITIVE_INFINITY,
  stringChars: Number.POSITIVE_INFINITY,
});

// String.prototype.isWellFormed (ES2024, in Node 20; not in this project's TypeScript lib).
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * A property name with its lone halves written as text (`\uD800`, six ASCII characters), for the path
 * of its refusal: the half itself would make the 400 as unreadable to strict JSON readers as the data
 * it refuses (JSON.stringify writes it back as that lone escape).
 */
const escapeHalves = (key: string): string =>
  key.replace(
    /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
    (half) => `\\u${half.charCodeAt(0).toString(16).toUpperCase()}`,
  );

const loneSurrogate = (path: string): Issue => ({
  path,
  code: 'invalid_encoding',
  message: `${path || 'body'} holds half of a surrogate pair (a \\uD800-\\uDFFF escape without its other half): send Unicode text`,
});

const notFinite = (path: string): Issue => ({
  path,
  code: 'out_of_range',
  message: `${path || 'body'} is a number beyond the range JSON numbers are read in (about ±1.8e308)`,
});

/** `advice`: unsafeIntegerAdvice's, from the schema of the field (a string only where one is taken). */
const unsafeInteger = (path: string, advice: string): Issue => ({
  path,
  code: 'out_of_range',
  message: `${path || 'body'} is an integer written beyond ±9007199254740991 (2^53-1), which JSON readers keep only approximately: ${advice}`,
});

const tooLong = (path: string, what: string): Issue => ({
  path,
  code: 'out_of_range',
  message: `${path || 'body'} must be ${what}`,
});

/** The Content-Encodings the body parser decodes (inflation: gzip, deflate, br; identity is none). */
export const CONTENT_ENCODINGS = 'gzip, deflate or br';

/**
 * A stream error of node:zlib (`Z_DATA_ERROR`, `Z_BUF_ERROR`; brotli's `ERR__ERROR_FORMAT_…`): the
 * body is not compressed as its Content-Encoding says.
 */
const isDecompressionError = (e: { code?: unknown; errno?: unknown }) =>
  typeof e.errno === 'number' &&
  typeof e.code === 'string' &&
  (e.code.startsWith('Z_') || e.code.startsWith('ERR__ERROR_') || e.code.startsWith('ERR_BROTLI'));

/**
 * What the koa-body `onError` hook throws: every parse failure as an envelope error. `encoding` is the
 * request's Content-Encoding, named in the answer to a body that does not decode.
 */
export function bodyParseError(err: unknown, limitBytes: number, encoding = ''): ApiError {
  const e = (err ?? {}) as { status?: number; type?: string; message?: string; body?: unknown };
  if (e.status === 413)
    return new ApiError(
      413,
      'VALIDATION_ERROR',
      `The request body is larger than ${limitBytes} bytes (counted decompressed, whatever its Content-Encoding): send a smaller body, or split the change into several requests`,
    );
  if (e.type === 'charset.unsupported')
    return new ApiError(415, 'VALIDATION_ERROR', 'Unsupported charset; send the body as UTF-8');
  if (e.status === 415)
    return new ApiError(
      415,
      'VALIDATION_ERROR',
      `Unsupported Content-Encoding ${JSON.stringify(encoding.slice(0, 40))}: send the body uncompressed, or compressed with ${CONTENT_ENCODINGS}`,
    );
  if (isDecompressionError(e as { code?: unknown; errno?: unknown }))
    return invalidBody(
      `The request body is not compressed as its Content-Encoding (${encoding.slice(0, 40)}) says: send it compressed so, or uncompressed without Content-Encoding`,
      'invalid_content_encoding',
    );
  if (e.type === 'request.size.invalid')
    return invalidBody('The request body length does not match Content-Length', 'length_mismatch');
  const text = typeof e.body === 'string' ? e.body : null;
  if (text !== null) {
    let parsed: unknown;
    let parses = false;
    try {
      parsed = JSON.parse(text);
      parses = true;
    } catch {
      // Not JSON at all: the generic answer below.
    }
    if (parses) {
      // Valid JSON the parser refused: a scalar or null (strict mode), or a __proto__ key.
      if (typeof parsed !== 'object' || parsed === null)
        return validationError(
          [{ path: '', code: 'invalid_type', message: `body must be a JSON object, not ${kindOf(parsed)}` }],
          'The request body must be a JSON object',
        );
      const issue = checkBody(parsed);
      if (issue) return validationError([issue], 'The request body is invalid');
    }
  }
  return invalidBody('The request body is not valid JSON', 'invalid_json');
}

const invalidBody = (message: string, code: string) =>
  new ApiError(400, 'VALIDATION_ERROR', message, {
    issues: [
      {
        path: '',
        code,
        message: code === 'invalid_json' ? 'The body could not be parsed as JSON' : message,
      },
    ],
  });

/** The JSON kind of a value, for messages: never calls anything on the value. */
export function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  switch (typeof v) {
    case 'string':
      return 'a string';
    case 'number':
      return Number.isInteger(v) ? 'an integer' : 'a number';
    case 'boolean':
      return 'a boolean';
    case 'object':
      return 'an object';
    case 'undefined':
      return 'nothing';
    default:
      return typeof v;
  }
}
