// Validates live responses against the schema the OpenAPI document gives for that operation and
// status, so the document cannot drift from what the server sends.
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { TestResponse } from './service';

type Doc = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
  >;
  components: { schemas: Record<string, unknown> };
};

export class OpenApiChecker {
  private readonly ajv: Ajv;
  private readonly cache = new Map<string, ValidateFunction | null>();
  constructor(private readonly doc: Doc) {
    this.ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(toJsonSchema({ components: doc.components }) as object, 'openapi');
  }

  /** `template` is the documented path, e.g. /api/partner/v1/customers/{id}. */
  check(method: string, template: string, res: TestResponse): void {
    const key = `${method} ${template} ${res.status}`;
    if (!this.cache.has(key)) {
      const op = this.doc.paths[template]?.[method.toLowerCase()];
      if (!op) throw new Error(`operation ${method} ${template} is not documented`);
      const response = op.responses[String(res.status)];
      if (!response) throw new Error(`status ${res.status} of ${method} ${template} is not documented`);
      const schema = response.content?.['application/json']?.schema;
      this.cache.set(key, schema ? this.ajv.compile(rewriteRefs(toJsonSchema(schema)) as object) : null);
    }
    const validate = this.cache.get(key);
    if (validate && !validate(res.body))
      throw new Error(
        `${key} does not match its documented schema: ${this.ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
      );
  }
}

/** OpenAPI 3.0 `nullable: true` → JSON Schema type unions. */
function toJsonSchema(s: unknown): unknown {
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

function rewriteRefs(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(rewriteRefs);
  if (!s || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s as Record<string, unknown>))
    out[k] = k === '$ref' && typeof v === 'string' ? `openapi${v}` : rewriteRefs(v);
  return out;
}
