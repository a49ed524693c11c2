// Validates live responses against the OpenAPI document: the body against the schema of that
// operation and status, and the headers against the ones documented there, so the document cannot
// drift from what the server sends.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Runtime } from '../../src/runtime';
import type { TestResponse } from './service';

type Ref = { $ref: string };
type Header = { required?: boolean; schema: unknown };
type Response = {
  headers?: Record<string, Header | Ref>;
  content?: Record<string, { schema: unknown }>;
};
export type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response | Ref> }>>;
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
}

export class OpenApiChecker {
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, Compiled>();
  constructor(private readonly doc: Doc) {
    this.ajv = newAjv();
    this.ajv.addSchema(toJsonSchema({ components: doc.components }) as object, 'openapi');
  }

  /** `template` is the documented path, e.g. /api/partner/v1/customers/{id}. */
  check(method: string, template: string, res: TestResponse): void {
    const key = `${method} ${template} ${res.status}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      const op = this.doc.paths[template]?.[method.toLowerCase()];
      if (!op) throw new Error(`operation ${method} ${template} is not documented`);
      const response = op.responses[String(res.status)];
      if (!response) throw new Error(`status ${res.status} of ${method} ${template} is not documented`);
      compiled = this.compile(response);
      this.cache.set(key, compiled);
    }
    this.apply(key, compiled, res);
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
    const name = metered ? base : `${base}NoRateLimit`;
    const key = `unrouted ${name}`;
    let compiled = this.cache.get(key);
    if (!compiled) {
      const response = this.doc.components.responses?.[name];
      if (!response) throw new Error(`components.responses.${name} is not documented`);
      compiled = this.compile(response);
      this.cache.set(key, compiled);
    }
    this.apply(`${method} ${template} ${res.status}`, compiled, res);
  }

  private compile(responseOrRef: Response | Ref): Compiled {
    const response = this.resolve<Response>(responseOrRef);
    const schema = response.content?.['application/json']?.schema;
    return {
      body: schema ? this.ajv.compile(rewriteRefs(toJsonSchema(schema)) as object) : null,
      headers: Object.entries(response.headers ?? {}).map(([name, h]) => {
        const header = this.resolve<Header>(h);
        return {
          name: name.toLowerCase(),
          required: header.required === true,
          validate: this.ajv.compile(rewriteRefs(toJsonSchema(header.schema)) as object),
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

/** Ajv set up for the document's schemas (after `toJsonSchema`). */
export function newAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv;
}

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

/** OpenAPI 3.0 `nullable: true` → JSON Schema type unions. */
export function toJsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (!s || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>)) {
    if (k === 'nullable' || k === 'example') continue;
    out[k] =
      k === 'properties'
        ? Object.fromEntries(Object.entries(v as object).map(([p, ps]) => [p, toJsonSchema(ps)]))
        : toJsonSchema(v);
  }
  if ((s as { nullable?: boolean }).nullable) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else if (out.enum) out.enum = [...(out.enum as unknown[]), null];
    else return { anyOf: [out, { type: 'null' }] };
    if (out.enum && !(out.enum as unknown[]).includes(null)) out.enum = [...(out.enum as unknown[]), null];
  }
  return out;
}

/** `#/components/…` → `openapi#/components/…`, the id the components are registered under. */
export function rewriteRefs(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(rewriteRefs);
  if (!s || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>))
    out[k] = k === '$ref' && typeof v === 'string' ? `openapi${v}` : rewriteRefs(v);
  return out;
}
