// The HTTP fuzzer behind test/e2e/fuzz.e2e.test.ts (bounded, seeded) and `npm run fuzz` (long runs).
// For every route the service declares it generates requests from the route's own schemas (valid,
// then broken one field at a time or with hostile values) and hostile raw requests (duplicate keys,
// prototype keys, deep nesting, wrong content types and encodings, odd query strings, path
// parameters with traversal and control characters), sends each on its own raw socket, and holds
// every answer to: no 5xx, no dropped connection, the error envelope on every error, and the
// OpenAPI document wherever the request was well-formed enough to reach its operation.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { AnyRoute } from '../../src/http/route';
import { fullPath } from '../../src/http/server';
import type { OpenApiChecker } from './openapi';
import { leaves, objectPaths, validValues, withValue } from './schema-values';

export interface FuzzRequest {
  /** What was generated, for the failure report. */
  label: string;
  method: string;
  /** The request target exactly as sent (may hold bytes a URL parser would refuse). */
  target: string;
  headers: [string, string][];
  body: Buffer | null;
  /** The documented operation to check the answer against; null for deliberately odd requests. */
  documented: { method: string; template: string } | null;
  /** Sent with Transfer-Encoding: chunked. */
  chunked?: boolean;
  /** A Content-Length shorter than the body. */
  shortLength?: boolean;
  /**
   * The route answers its own errors in another format than the envelope: RFC 6749 bodies (the OAuth
   * token and revocation endpoints) or HTML pages (sign-in, consent, dashboard). What the router answers
   * before the route runs (404, 405) is still the envelope.
   */
  ownErrors?: 'oauth' | 'html';
  /** Sent with the signed-in manager's session (FuzzOptions.session). */
  signed?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
  body: any;
}

export interface FuzzOptions {
  routes: AnyRoute[];
  /** A token holding every scope, and one of another restaurant. */
  tokens: { full: string; other: string };
  /**
   * A signed-in manager's session (its Cookie header and CSRF token) and the restaurant they manage:
   * the pages' requests carry it most of the time, and a form body that is a JSON object gets its
   * `csrf_token` (and `restaurant_id`), so the dashboard's handlers are reached, not only its sign-in
   * redirect. Sign-out is never sent signed (the session would end mid-run).
   */
  session?: { cookie: string; csrf: string; restaurant: string };
}

const ERROR_CODES = new Set([
  'AUTHENTICATION_REQUIRED',
  'INVALID_AUTHENTICATION',
  'INSUFFICIENT_SCOPE',
  'RESTAURANT_SUSPENDED',
  'VALIDATION_ERROR',
  'RESOURCE_NOT_FOUND',
  'RESOURCE_CONFLICT',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
]);

// ---------------------------------------------------------------------------------------------------
// Values

/** Strings that break things: control characters, unicode of every width, lone surrogates, huge. */
const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u0000abc',
    '\r\n',
    '\t',
    '\u202e',
    '\ufeff',
    '\ud800',
    '\udfff',
    '😀',
    'é',
    'e\u0301',
    '..',
    '../../etc/passwd',
    '%00',
    '%',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    `\${7*7}`,
    '{{7*7}}',
    '__proto__',
    'constructor',
    'toString',
    '2026-02-30T19:00:00+02:00',
    '2026-06-03T19:00:00+25:00',
    '2026-06-03T19:00:00',
    '+33612345678',
    'a@b',
    'NaN',
    '1e309',
    '-0',
    'true',
    'null',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.integer({ min: 200, max: 120_000 }).map((n) => 'x'.repeat(n)),
);

/** Numbers at and past every edge (JSON text, since 1e400 and -0 do not survive JSON.stringify). */
const nastyNumberText = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '-1',
    '1e400',
    '-1e400',
    '1e-400',
    '5e-324',
    '1.7976931348623157e308',
    '9007199254740993',
    '99999999999999999999999999',
    '2.0',
    '2.5',
    '1E2',
    '0.1e1',
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
);

const hostileKey = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'valueOf',
    'hasOwnProperty',
    'toJSON',
    '',
    ' ',
    'id',
    'name',
    '\u0000',
    'a.b',
    '0',
  ),
  fc.string({ maxLength: 12 }),
);

/** A JSON text fragment: any value, some only expressible as text. */
const nastyJson: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('null', 'true', 'false', '{}', '[]', '""'),
    nastyNumberText,
    nastyString.map((s) => JSON.stringify(s)),
    fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc
      .array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 })
      .map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
    fc.constantFrom('{"toString":null}', '{"valueOf":null,"toString":"x"}', '[{"toString":null}]'),
  ),
})).value;

const nested = (n: number, open: string, close: string, leaf = '1') =>
  `${open.repeat(n)}${leaf}${close.repeat(n)}`;

/** Whole bodies no schema would produce. */
const rawBodies: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'null',
    'true',
    '12',
    '"text"',
    '[]',
    '[{}]',
    '[{"toString":null}]',
    '',
    ' ',
    '\ufeff{}',
    '{',
    '{"a":}',
    "{'a':1}",
    '{"a":1,}',
    '{"__proto__":{"polluted":true}}',
    '{"a":{"__proto__":{"polluted":true}}}',
    '{"\\u005f_proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"party_size":2,"party_size":"two"}',
    '{"name":"a","name":{"toString":null}}',
    '{"party_size":1e400}',
    '{"party_size":-0}',
    '{"name":"\\ud800"}',
    '{"name":"\\u0000"}',
    'NaN',
    'Infinity',
    '{"a":NaN}',
    // Form bodies (sent as JSON, or as a form when the content type is drawn too).
    'a=1&a=2',
    '__proto__[polluted]=1',
    'constructor[prototype][polluted]=1',
    'a[b][c][d][e][f][g]=1',
  ),
  fc.constantFrom(33, 100, 5_000, 100_000).map((n) => nested(n, '[', ']', '')),
  fc.constantFrom(33, 1_000, 50_000).map((n) => `{"metadata":${nested(n, '{"a":', '}')}}`),
  fc.constantFrom(33, 5_000).map((n) => `{"customer":${nested(n, '[', ']', '{}')}}`),
  nastyJson,
  fc
    .array(fc.tuple(hostileKey, nastyJson), { maxLength: 8 })
    .map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
);

// ---------------------------------------------------------------------------------------------------
// Requests

/** A JSON text of the value with the leaf at `path` replaced by a JSON fragment. */
function jsonWith(value: unknown, path: string[], fragment: string): string {
  const marker = '\u0000FUZZ\u0000';
  return JSON.stringify(withValue(value, path, marker)).replace(JSON.stringify(marker), fragment);
}

/** Bodies from the route's schema: valid, one field broken, or an extra hostile property. */
function schemaBodies(json: Record<string, unknown>): fc.Arbitrary<string> {
  const bases = [...validValues(json, 'body'), ...validValues(json, 'body', true)];
  return fc.constantFrom(...bases).chain((base) => {
    const spots = leaves(base);
    // Objects inside the body (open records such as metadata, custom_fields, headers take any name).
    const inner = objectPaths(base).filter((p) => p.length > 0);
    return fc.oneof(
      fc.constant(JSON.stringify(base)),
      spots.length === 0
        ? fc.constant(JSON.stringify(base))
        : fc
            .tuple(fc.constantFrom(...spots), nastyJson)
            .map(([leaf, fragment]) => jsonWith(base, leaf.path, fragment)),
      fc
        .tuple(hostileKey, nastyJson)
        .map(
          ([k, v]) =>
            `${JSON.stringify(base).slice(0, -1)}${Object.keys(base as object).length ? ',' : ''}${JSON.stringify(k)}:${v}}`,
        ),
      // A member with a hostile value inside one of them: metadata {"x": 1e400} reached the event log.
      inner.length === 0
        ? fc.constant(JSON.stringify(base))
        : fc
            .tuple(fc.constantFrom(...inner), fc.constantFrom('fuzz', 'x', 'a.b', '0'), nastyJson)
            .map(([at, k, fragment]) => jsonWith(base, [...at, k], fragment)),
    );
  });
}

/** Percent-encodes the UTF-8 bytes of any string (encodeURIComponent throws on a lone surrogate). */
const enc = (s: string) =>
  [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** Query strings from the route's schema, broken the ways query strings break. */
function queries(json: Record<string, unknown> | undefined): fc.Arbitrary<string> {
  const bases = json ? [...validValues(json, 'query'), ...validValues(json, 'query', true)] : [{}];
  const encode = (o: Record<string, unknown>) =>
    Object.entries(o)
      .map(([k, v]) => `${enc(k)}=${enc(String(v))}`)
      .join('&');
  const junk = fc.constantFrom(
    '%',
    '%zz',
    '%E0%A4%A',
    '%C0%AF',
    '%ED%A0%80',
    '&&&',
    '=',
    'a==b',
    '__proto__=1',
    '__proto__[polluted]=1',
    'constructor[prototype][polluted]=1',
    'a[b]=1',
    'a[]=1&a[]=2',
    'toString=1',
    'hasOwnProperty=1',
    `${'x'.repeat(6_000)}=1`,
    'page=1&page=2',
    'per_page=1e3',
    'limit=-0',
    'page=0x10',
    'page=%2B1',
    'party_size=%00',
  );
  return fc.constantFrom(...bases).chain((base) => {
    const o = base as Record<string, unknown>;
    const keys = Object.keys(o);
    return fc.oneof(
      fc.constant(encode(o)),
      keys.length === 0
        ? fc.constant('')
        : fc.tuple(fc.constantFrom(...keys), nastyString).map(([k, v]) => encode({ ...o, [k]: v })),
      keys.length === 0
        ? fc.constant('a=1&a=2')
        : fc.constantFrom(...keys).map((k) => `${encode(o)}&${enc(k)}=${enc(String(o[k]))}`),
      fc.tuple(junk, fc.boolean()).map(([j, keep]) => (keep && keys.length ? `${encode(o)}&${j}` : j)),
      fc.tuple(hostileKey, nastyString).map(([k, v]) => `${encode(o)}&${enc(k)}=${enc(v)}`),
    );
  });
}

/** Path parameter values: usual ids, traversal, control characters, broken escapes, huge. */
const segment: fc.Arbitrary<{ raw: string; wellFormed: boolean }> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('res_1', 'cus_1', 'x').map((raw) => ({ raw, wellFormed: true })) },
  {
    weight: 3,
    arbitrary: fc.oneof(nastyString, fc.string({ unit: 'grapheme', maxLength: 20 })).map((s) => ({
      raw: enc(s) || 'x',
      wellFormed: true,
    })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '..',
        '.',
        '%2e%2e',
        '..%2F..%2Fetc%2Fpasswd',
        '%00',
        '%0a%0d',
        '%1b',
        '%2F',
        '%5C',
        '%ZZ',
        '%',
        '%C0%AF',
        '%ED%A0%80',
        '%FF',
        ';x=1',
        "'",
        '~',
        'x'.repeat(300),
        'x'.repeat(9_000),
        'x'.repeat(70_000),
      )
      .map((raw) => ({ raw, wellFormed: false })),
  },
  {
    weight: 1,
    // Bytes Node's parser refuses in a request line: answered by the clientError handler.
    arbitrary: fc
      .constantFrom('\u0001', '\u007f', 'a b', '\t', 'é', '\u0000', '"', '<', '\\')
      .map((raw) => ({ raw, wellFormed: false })),
  },
);

const contentTypes = fc.constantFrom(
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/json; charset=nope',
  'application/xml',
  'application/jsonx',
  'application/vnd.api+json',
  '*/*',
  'json',
  '',
  ';;;',
);

interface Shape {
  route: AnyRoute;
  template: string;
}

function requestFor({ route, template }: Shape, o: FuzzOptions): fc.Arbitrary<FuzzRequest> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const params = fc.array(segment, { minLength: names.length, maxLength: names.length });
  const body = route.body
    ? fc.oneof({ weight: 6, arbitrary: schemaBodies(route.body.json) }, { weight: 4, arbitrary: rawBodies })
    : fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: rawBodies });
  const token = fc.oneof(
    { weight: 20, arbitrary: fc.constant(`Bearer ${o.tokens.full}`) },
    { weight: 1, arbitrary: fc.constant(`Bearer ${o.tokens.other}`) },
    { weight: 1, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Basic YTpi', 'bearer x', `Bearer ${'x'.repeat(5000)}`),
    },
  );
  const oddity = fc.oneof(
    { weight: 14, arbitrary: fc.constant('none' as const) },
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'content-type' as const,
        'encoding' as const,
        'method' as const,
        'chunked' as const,
        'short-length' as const,
        'request-id' as const,
        'duplicate-header' as const,
        'latin1' as const,
        'invalid-utf8' as const,
        'gzip' as const,
        'form' as const,
      ),
    },
  );
  return fc
    .record({
      params,
      query: queries(route.query?.json),
      body,
      token,
      oddity,
      contentType: contentTypes,
      method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
      // A page's request as the signed-in manager (most of the time), its form sent form-encoded or not.
      signed: fc.constantFrom(true, true, true, false),
      formEncoded: fc.boolean(),
    })
    .map((g) => {
      let path = template;
      names.forEach((n, i) => {
        path = path.replace(`{${n}}`, g.params[i]?.raw ?? 'x');
      });
      const target = g.query ? `${path}?${g.query}` : path;
      const headers: [string, string][] = [];
      if (g.token) headers.push(['authorization', g.token]);
      let method: string = route.method;
      let bodyText = g.body;
      if (bodyText !== null) headers.push(['content-type', 'application/json']);
      switch (g.oddity) {
        case 'content-type':
          if (bodyText === null) bodyText = '{}';
          setHeader(headers, 'content-type', g.contentType);
          break;
        case 'encoding':
          headers.push(['content-encoding', bodyText && bodyText.length % 2 ? 'gzip' : 'br, nope']);
          break;
        case 'method':
          method = g.method;
          break;
        case 'request-id':
          headers.push(['x-request-id', 'x'.repeat(300)]);
          break;
        case 'duplicate-header':
          headers.push(['content-type', 'text/plain']);
          headers.push(['authorization', 'Bearer nope']);
          break;
      }
      const page = route.renderError !== undefined && !route.ownErrors;
      const session = o.session && page && g.signed && !path.startsWith('/sign-out') ? o.session : null;
      let formBody: string | null = null;
      if (session) {
        headers.push(['cookie', session.cookie]);
        const fields = bodyText === null ? null : signedFields(bodyText, session);
        if (fields) {
          try {
            bodyText = JSON.stringify(fields);
            if (g.formEncoded) formBody = formEncode(fields);
          } catch {
            // Nested past what JSON.stringify recurses through: sent as drawn, unsigned.
          }
        }
      }
      if (g.oddity === 'form') {
        setHeader(headers, 'content-type', 'application/x-www-form-urlencoded');
        bodyText = bodyText ?? '__proto__[polluted]=1&a=1&a=2';
      }
      if (formBody !== null && g.oddity === 'none') {
        setHeader(headers, 'content-type', 'application/x-www-form-urlencoded');
        bodyText = formBody;
      }
      let bytes = bodyText === null ? null : Buffer.from(bodyText, 'utf8');
      if (bytes && g.oddity === 'latin1') bytes = Buffer.from(bodyText as string, 'latin1');
      if (bytes && g.oddity === 'invalid-utf8')
        bytes = Buffer.concat([
          bytes.subarray(0, bytes.length >> 1),
          Buffer.from([0xff, 0xc0, 0xed, 0xa0, 0x80]),
          bytes.subarray(bytes.length >> 1),
        ]);
      if (bytes && g.oddity === 'gzip') {
        bytes = gzipSync(bytes);
        headers.push(['content-encoding', 'gzip']);
      }
      const wellFormed = g.params.every((p) => p.wellFormed) && !g.query.includes('%');
      const plain =
        wellFormed &&
        method === route.method &&
        ['none', 'content-type', 'request-id', 'gzip', 'latin1', 'invalid-utf8', 'form'].includes(g.oddity);
      return {
        label: `${g.oddity}${session ? ' signed' : ''} ${method} ${target.slice(0, 300)} ${bodyText === null ? '' : bodyText.slice(0, 300)}`,
        method,
        target,
        headers,
        body: bytes,
        // Hidden routes (the reference page, the test clock) are not in the document to check against.
        documented: plain && !route.hidden ? { method: route.method, template } : null,
        chunked: g.oddity === 'chunked',
        ...(session ? { signed: true } : {}),
        shortLength: g.oddity === 'short-length',
        ...(route.renderError ? { ownErrors: route.ownErrors ? ('oauth' as const) : ('html' as const) } : {}),
      };
    });
}

/** The body's fields with the session's CSRF token (and its restaurant unless one is given), or null. */
function signedFields(
  text: string,
  session: NonNullable<FuzzOptions['session']>,
): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const fields = value as Record<string, unknown>;
  return {
    ...fields,
    csrf_token: session.csrf,
    restaurant_id: typeof fields.restaurant_id === 'string' ? fields.restaurant_id : session.restaurant,
  };
}

/** Fields as a browser's form sends them: an array is the field repeated, anything else its text. */
function formEncode(fields: Record<string, unknown>): string {
  const pairs: string[] = [];
  for (const [k, v] of Object.entries(fields))
    for (const one of Array.isArray(v) ? v : [v])
      pairs.push(`${enc(k)}=${enc(typeof one === 'string' ? one : (JSON.stringify(one) ?? ''))}`);
  return pairs.join('&');
}

function setHeader(headers: [string, string][], name: string, value: string) {
  const at = headers.findIndex(([k]) => k === name);
  if (at >= 0) headers.splice(at, 1);
  headers.push([name, value]);
}

/** A seeded list of requests covering every route (and a few paths no route has). */
export function generate(o: FuzzOptions, count: number, seed: number): FuzzRequest[] {
  const shapes: Shape[] = o.routes.map((route) => ({ route, template: fullPath(route) }));
  const arb = fc.oneof(...shapes.map((s) => ({ weight: 10, arbitrary: requestFor(s, o) })), {
    weight: 3,
    arbitrary: fc.tuple(fc.constantFrom(...shapes), segment).chain(([s, seg]) =>
      requestFor({ ...s, template: `${s.template}/${seg.raw}` }, o).map((r) => ({
        ...r,
        documented: null,
      })),
    ),
  });
  // Every route first (so a short run still reaches each), then the seeded mix.
  const firsts = shapes.flatMap((s) => fc.sample(requestFor(s, o), { seed, numRuns: 1 }));
  return [...firsts, ...fc.sample(arb, { seed, numRuns: Math.max(0, count - firsts.length) })];
}

// ---------------------------------------------------------------------------------------------------
// Sending and judging

/** Sends one request on its own socket and reads the whole answer; rejects on a dropped connection. */
export function send(port: number, req: FuzzRequest, timeoutMs = 15_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const data = Buffer.concat(chunks);
      const parsed = parseResponse(data, req.method === 'HEAD');
      // An answer read in full counts even when the socket was then reset (the server may close
      // before reading a body it refused).
      if (parsed) resolve(parsed);
      else reject(err ?? new Error(`connection closed after ${data.length} bytes without a whole response`));
    };
    const timer = setTimeout(() => finish(new Error(`no complete answer in ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (c) => {
      chunks.push(c);
    });
    socket.on('error', (e) => finish(e));
    socket.on('close', () => finish(null));
    socket.on('connect', () => {
      const lines = [`${req.method} ${req.target} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
      for (const [k, v] of req.headers) lines.push(`${k}: ${v}`);
      let payload: Buffer = Buffer.alloc(0);
      if (req.body) {
        if (req.chunked) {
          lines.push('transfer-encoding: chunked');
          const half = Math.floor(req.body.length / 2);
          const parts = [req.body.subarray(0, half), req.body.subarray(half)].filter((p) => p.length);
          payload = Buffer.concat([
            ...parts.flatMap((p) => [Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from('\r\n')]),
            Buffer.from('0\r\n\r\n'),
          ]);
        } else {
          lines.push(
            `content-length: ${req.shortLength ? Math.floor(req.body.length / 2) : req.body.length}`,
          );
          payload = req.body;
        }
      }
      socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]));
    });
  });
}

function parseResponse(data: Buffer, head: boolean): RawResponse | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...headerLines] = data.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '');
  if (!m) return null;
  const headers = new Headers();
  for (const line of headerLines) {
    const i = line.indexOf(':');
    if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
  }
  let body = data.subarray(end + 4);
  if (!head) {
    if (headers.get('transfer-encoding')?.includes('chunked')) {
      const out: Buffer[] = [];
      let at = 0;
      for (;;) {
        const nl = body.indexOf('\r\n', at);
        if (nl < 0) return null;
        const size = Number.parseInt(body.subarray(at, nl).toString('latin1'), 16);
        if (Number.isNaN(size)) return null;
        if (size === 0) break;
        if (body.length < nl + 2 + size) return null;
        out.push(body.subarray(nl + 2, nl + 2 + size));
        at = nl + 2 + size + 2;
      }
      body = Buffer.concat(out);
    } else {
      const length = headers.get('content-length');
      if (length !== null) {
        if (body.length < Number(length)) return null;
        body = body.subarray(0, Number(length));
      }
    }
  }
  const text = head ? '' : body.toString('utf8');
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: Number(m[1]), headers, text, body: parsed };
}

/** Why an answer is wrong, or null. */
export function judge(req: FuzzRequest, res: RawResponse, checker: OpenApiChecker | null): string | null {
  if (res.status >= 500) return `answered ${res.status}: ${res.text.slice(0, 300)}`;
  if (res.status >= 400 && req.method !== 'HEAD' && req.ownErrors && typeof res.body?.error !== 'object') {
    if (req.ownErrors === 'oauth') {
      if (typeof res.body?.error !== 'string' || typeof res.body?.error_description !== 'string')
        return `OAuth error ${res.status} without {error, error_description}: ${res.text.slice(0, 300)}`;
      if (res.headers.get('cache-control') !== 'no-store')
        return 'OAuth error without Cache-Control: no-store';
    } else {
      if (!/^text\/html/.test(res.headers.get('content-type') ?? ''))
        return `page error ${res.status} not HTML`;
      if (!/frame-ancestors 'none'/.test(res.headers.get('content-security-policy') ?? ''))
        return 'page error without the page CSP';
    }
  } else if (res.status >= 400 && req.method !== 'HEAD') {
    const e = res.body?.error;
    if (!e || typeof e !== 'object')
      return `error ${res.status} without the envelope: ${res.text.slice(0, 300)}`;
    if (!ERROR_CODES.has(e.code)) return `unknown error code ${String(e.code)}`;
    if (typeof e.message !== 'string' || !e.message) return 'error without a message';
    if (typeof e.request_id !== 'string' || !e.request_id) return 'error without a request_id';
    if (res.headers.get('x-request-id') !== e.request_id) return 'x-request-id differs from error.request_id';
    if (!/^application\/json/.test(res.headers.get('content-type') ?? '')) return 'error not served as JSON';
    if (e.details !== undefined) {
      if (typeof e.details !== 'object' || e.details === null) return 'details is not an object';
      const issues = e.details.issues;
      if (issues !== undefined) {
        if (!Array.isArray(issues)) return 'details.issues is not an array';
        for (const i of issues)
          if (typeof i?.path !== 'string' || typeof i?.code !== 'string' || typeof i?.message !== 'string')
            return `malformed issue ${JSON.stringify(i).slice(0, 200)}`;
      }
    }
    if (res.status === 400 && e.code !== 'VALIDATION_ERROR') return `400 with code ${e.code}`;
  }
  // 431 comes from Node's parser (the request line and headers passed its 16 KiB), before any
  // operation: the clientError handler answers it in the envelope, checked above.
  if (checker && req.documented && res.status !== 431) {
    try {
      checker.check(req.documented.method, req.documented.template, res);
    } catch (err) {
      return `does not fit the OpenAPI document: ${(err as Error).message.slice(0, 400)}`;
    }
  }
  return null;
}

export interface FuzzReport {
  sent: number;
  failed: number;
  failures: { request: string; why: string }[];
  statuses: Record<number, number>;
  /** Signed page requests answered past the session and CSRF checks (not sent to sign-in, not 403). */
  signedPast: number;
}

/** Sends the requests, `concurrency` at a time, and judges each answer. */
export async function runFuzz(
  port: number,
  requests: FuzzRequest[],
  checker: OpenApiChecker | null,
  concurrency = 4,
  onProgress?: (done: number) => void,
): Promise<FuzzReport> {
  const report: FuzzReport = { sent: 0, failed: 0, failures: [], statuses: {}, signedPast: 0 };
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++] as FuzzRequest;
      report.sent++;
      let why: string | null;
      try {
        const res = await send(port, req);
        report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
        const toSignIn = res.status === 303 && (res.headers.get('location') ?? '').startsWith('/sign-in');
        if (req.signed && !toSignIn && res.status !== 403 && res.status < 500) report.signedPast++;
        why = judge(req, res, checker);
      } catch (err) {
        why = `dropped connection: ${(err as Error).message}`;
      }
      if (why) {
        report.failed++;
        if (report.failures.length < 50) report.failures.push({ request: req.label, why });
      }
      onProgress?.(report.sent);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return report;
}
