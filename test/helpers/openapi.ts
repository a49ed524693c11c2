// Validates live traffic against the OpenAPI document: each request body a test sends against the
// operation's requestBody schema, each response body against the schema of that operation and status,
// and its headers against the ones documented there, so the document cannot drift from the server.
// Schemas are read with OpenAPI 3.0.3 semantics by @openapi-contrib/openapi-schema-to-json-schema
// (`nullable` counts only beside a `type`; `exclusiveMinimum` is a boolean), then checked by Ajv's
// draft-04 validator, the JSON Schema those semantics map to.
import { openapiSchemaToJsonSchema } from '@openapi-contrib/openapi-schema-to-json-schema';
import type { ValidateFunction } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import type { Runtime } from '../../src/runtime';
import type { TestResponse } from './service';

type Ref = { $ref: string };
type Header = { required?: boolean; schema: unknown };
type Response = {
  headers?: Record<string, Header | Ref>;
  content?: Record<string, { schema: unknown }>;
};
type Operation = {
  requestBody?: { required?: boolean; content?: Record<string, { schema: unknown }> } | Ref;
  responses: Record<string, Response | Ref>;
};
export type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, unknown>;
    responses?: Record<string, Response>;
    headers?: Record<string, Header>;
  };
};

const PARTNER = '/api/partner/v1';

/** Set by Node or the HTTP stack for every response; not the API's to document. */
const TRANSPORT = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

interface Compiled {
  body: ValidateFunction | null;
  headers: { name: string; required: boolean; validate: ValidateFunction }[];
  /**
   * The envelope codes this response documents (its examples' error.code): a live error answering
   * another code (a 404 saying VALIDATION_ERROR) fits the shared Error schema, yet not the document.
   * Null for a response without envelope examples (the OAuth endpoints' RFC 6749 bodies).
   */
  codes: ReadonlySet<string> | null;
}

type Example = { value?: { error?: { code?: unknown } } };

export class OpenApiChecker {
  private readonly ajv: AjvDraft04;
  private readonly cache = new Map<string, Compiled>();
  private readonly requests = new Map<string, ValidateFunction | null>();
  constructor(private readonly doc: Doc) {
    this.ajv = new AjvDraft04({ strict: false, allErrors: true });
    addFormats(this.ajv);
    // The shared schemas, under the id `openapi`: `#/components/schemas/X` becomes `openapi#/…`.
    const schemas = Object.fromEntries(
      Object.entries(doc.components.schemas ?? {}).map(([name, schema]) => [name, convert(schema)]),
    );
    this.ajv.addSchema({ id: 'openapi', components: { schemas } }, 'openapi');
  }

  /** A validator for one schema of the document, read with OpenAPI 3.0.3 semantics. */
  validator(schema: unknown): ValidateFunction {
    return this.ajv.compile(rewriteRefs(convert(this.resolve(schema as Ref))) as object);
  }

  errorsText(validate: ValidateFunction): string {
    return this.ajv.errorsText(validate.errors);
  }

  /**
   * A request body a test sends, against the operation's requestBody schema. `invalid` marks a body
   * sent wrong on purpose: it must then fail the schema, so the mark cannot hide a valid body either.
   */
  checkRequest(method: string, template: string, body: unknown, invalid = false): void {
    const key = `${method} ${template}`;
    if (!this.requests.has(key)) {
      const op = this.doc.paths[template]?.[method.toLowerCase()];
      if (!op) throw new Error(`operation ${key} is not documented`);
      const requestBody = op.requestBody && this.resolve(op.requestBody);
      const schema = requestBody?.content?.['application/json']?.schema;
      this.requests.set(key, schema ? this.validator(schema) : null);
    }
    const validate = this.requests.get(key);
    const valid = validate ? validate(body) : false;
    if (invalid) {
      if (valid)
        throw new Error(`${key}: the body marked invalid fits the document: ${JSON.stringify(body)}`);
      return;
    }
    if (!validate) throw new Error(`${key} documents no request body, yet the test sends one`);
    if (!valid)
      throw new Error(
        `${key}: the request body does not fit the document (${this.ajv.errorsText(validate.errors)}); ` +
          `mark a body sent wrong on purpose with { invalid: true }\n${JSON.stringify(body).slice(0, 500)}`,
      );
  }

  /**
   * `template` is the documented path, e.g. /api/partner/v1/customers/{id}. A HEAD request is checked
   * against the GET operation (the document says HEAD is answered as GET, without the body).
   */
  check(method: string, template: string, res: TestResponse): void {
    if (method === 'HEAD') {
      if (res.text !== '')
        throw new Error(`HEAD ${template} ${res.status} has a body: ${res.text.slice(0, 200)}`);
      const key = `HEAD ${template} ${res.status}`;
      const compiled = this.compiled('GET', template, res.status);
      this.apply(key, { ...compiled, body: null, codes: null }, res);
      return;
    }
    this.apply(`${method} ${template} ${res.status}`, this.compiled(method, template, res.status), res);
  }

  /**
   * A path the document does not list. Under /api/partner/v1 (no hidden route lives there) the server
   * can only answer 404 (components.responses.NotFound: the description promises the envelope) or, on
   * a spent budget, 429. Elsewhere the pages may answer their own 404 page: nothing to hold it to.
   */
  checkUnlisted(method: string, pathname: string, res: TestResponse): void {
    if (!(pathname === PARTNER || pathname.startsWith(`${PARTNER}/`))) return;
    const name = res.status === 404 ? 'NotFound' : res.status === 429 ? 'TooManyRequests' : null;
    if (!name) throw new Error(`${method} ${pathname} is not documented, yet answered ${res.status}`);
    const key = `unlisted ${name}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      const response = this.doc.components.responses?.[name];
      if (!response) throw new Error(`components.responses.${name} is not documented`);
      compiled = this.compile(response);
      this.cache.set(key, compiled);
    }
    this.apply(`${method} ${pathname} ${res.status}`, compiled, res);
  }

  private compiled(method: string, template: string, status: number): Compiled {
    const key = `${method} ${template} ${status}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      const op = this.doc.paths[template]?.[method.toLowerCase()];
      if (!op) throw new Error(`operation ${method} ${template} is not documented`);
      const response = op.responses[String(status)];
      if (!response) throw new Error(`status ${status} of ${method} ${template} is not documented`);
      compiled = this.compile(response);
      this.cache.set(key, compiled);
    }
    return compiled;
  }

  /**
   * A request no operation answers because the path does not declare the method: before routing the
   * server can only answer 405 (components.responses.MethodNotAllowed) or, on a spent budget, 429.
   */
  checkUnrouted(method: string, template: string, res: TestResponse): void {
    const metered = template === PARTNER || template.startsWith(`${PARTNER}/`);
    const base =
      res.status === 405 ? 'MethodNotAllowed' : res.status === 429 && metered ? 'TooManyRequests' : null;
    if (!base) throw new Error(`${method} ${template} is not an operation, yet answered ${res.status}`);
    // The OAuth token and revocation endpoints answer their 405 as an RFC 6749 body (not rate-limited).
    const name =
      template.startsWith('/api/oauth/') && res.status === 405
        ? 'MethodNotAllowedOAuth'
        : metered
          ? base
          : `${base}NoRateLimit`;
    const key = `unrouted ${name}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      const response = this.doc.components.responses?.[name];
      if (!response) throw new Error(`components.responses.${name} is not documented`);
      compiled = this.compile(response);
      this.cache.set(key, compiled);
    }
    if (method === 'HEAD') {
      if (res.text !== '')
        throw new Error(`HEAD ${template} ${res.status} has a body: ${res.text.slice(0, 200)}`);
      compiled = { ...compiled, body: null, codes: null };
    }
    this.apply(`${method} ${template} ${res.status}`, compiled, res);
  }

  private compile(responseOrRef: Response | Ref): Compiled {
    const response = this.resolve<Response>(responseOrRef);
    const media = response.content?.['application/json'] as
      | { schema: unknown; examples?: Record<string, Example | Ref> }
      | undefined;
    const schema = media?.schema;
    const examples = Object.values(media?.examples ?? {}).map((e) => this.resolve<Example>(e));
    const codes = examples.map((e) => e.value?.error?.code).filter((c): c is string => typeof c === 'string');
    return {
      codes: codes.length ? new Set(codes) : null,
      body: schema ? this.validator(schema) : null,
      headers: Object.entries(response.headers ?? {}).map(([name, h]) => {
        const header = this.resolve<Header>(h);
        return {
          name: name.toLowerCase(),
          required: header.required === true,
          validate: this.validator(header.schema),
        };
      }),
    };
  }

  private apply(key: string, compiled: Compiled, res: TestResponse): void {
    const fail = (why: string) => {
      throw new Error(`${key} ${why}\n${res.text.slice(0, 500)}`);
    };
    if (compiled.body && !compiled.body(res.body))
      fail(`does not match its documented schema: ${this.ajv.errorsText(compiled.body.errors)}`);
    const code = res.body?.error?.code;
    if (compiled.codes && !compiled.codes.has(code))
      fail(`answers ${code}, not a code this status documents (${[...compiled.codes].join(', ')})`);
    for (const h of compiled.headers) {
      const value = res.headers.get(h.name);
      if (value === null) {
        if (h.required) fail(`lacks its documented header ${h.name}`);
        continue;
      }
      if (!h.validate(headerValue(value)))
        fail(`header ${h.name}: ${JSON.stringify(value)} ${this.ajv.errorsText(h.validate.errors)}`);
    }
    const documented = new Set(compiled.headers.map((h) => h.name));
    for (const name of res.headers.keys())
      if (!TRANSPORT.has(name) && !documented.has(name)) fail(`sends the undocumented header ${name}`);
    const requestId = res.body?.error?.request_id;
    if (requestId !== undefined && requestId !== res.headers.get('x-request-id'))
      fail(`error.request_id ${requestId} differs from x-request-id ${res.headers.get('x-request-id')}`);
  }

  private resolve<T>(value: T | Ref): T {
    const ref = (value as Ref).$ref;
    if (!ref) return value as T;
    const found = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], this.doc);
    if (!found) throw new Error(`${ref} does not resolve`);
    return found as T;
  }
}

/** Header values are text; a numeric one is compared with an integer or number schema as a number. */
const headerValue = (v: string): unknown => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);

/**
 * The document the server publishes, from the route that serves it: the same handler, without an
 * HTTP request that would spend the caller's rate-limit budget.
 */
export async function publishedDocument(rt: Runtime): Promise<Doc> {
  const { allRoutes, partnerRoutes } = await import('../../src/http/routes/index');
  const route = [...allRoutes(rt), ...partnerRoutes()].find((r) => r.operationId === 'getOpenApi');
  if (!route) throw new Error('no route serves openapi.json');
  const result = await route.handler({ rt } as never);
  return structuredClone(result.body) as Doc;
}

/** One OpenAPI 3.0.3 schema object as draft-04 JSON Schema; `$ref`s are left for `rewriteRefs`. */
function convert(schema: unknown): unknown {
  const { $schema: _, ...json } = openapiSchemaToJsonSchema(schema as object) as Record<string, unknown>;
  return json;
}

/** `#/components/…` → `openapi#/components/…`, the id the components are registered under. */
function rewriteRefs(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(rewriteRefs);
  if (!s || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>))
    out[k] = k === '$ref' && typeof v === 'string' ? `openapi${v}` : rewriteRefs(v);
  return out;
}
