// Every example an OpenAPI document holds, each with the schema it illustrates: media types
// (`example`, `examples` with their $refs resolved), parameters, headers and `example` keywords inside
// schemas. What a partner copies from the document must be valid against the document.

export interface FoundExample {
  where: string;
  schema: unknown;
  value: unknown;
}

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => Boolean(v) && typeof v === 'object' && !Array.isArray(v);

export function resolveRef(doc: unknown, value: unknown): unknown {
  const ref = isNode(value) ? value.$ref : undefined;
  if (typeof ref !== 'string') return value;
  const found = ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((node, part) => (isNode(node) ? node[part] : undefined), doc);
  if (found === undefined) throw new Error(`${ref} does not resolve`);
  return found;
}

/** `example` keywords inside a schema, each checked against the subschema that carries it. */
function schemaExamples(schema: unknown, where: string, out: FoundExample[]): void {
  if (Array.isArray(schema)) {
    for (const [i, s] of schema.entries()) schemaExamples(s, `${where}[${i}]`, out);
    return;
  }
  if (!isNode(schema)) return;
  if (schema.example !== undefined) out.push({ where, schema, value: schema.example });
  if (isNode(schema.properties))
    for (const [name, s] of Object.entries(schema.properties)) schemaExamples(s, `${where}.${name}`, out);
  for (const k of ['items', 'additionalProperties', 'not'])
    if (isNode(schema[k])) schemaExamples(schema[k], `${where}/${k}`, out);
  for (const k of ['oneOf', 'anyOf', 'allOf'])
    if (Array.isArray(schema[k])) schemaExamples(schema[k], `${where}/${k}`, out);
}

/** A parameter, header or media type: its own example(s), then those inside its schema. */
function holderExamples(doc: unknown, holder: unknown, where: string, out: FoundExample[]): void {
  const h = resolveRef(doc, holder);
  if (!isNode(h) || !('schema' in h)) return;
  if (h.example !== undefined) out.push({ where, schema: h.schema, value: h.example });
  if (isNode(h.examples))
    for (const [name, e] of Object.entries(h.examples)) {
      const ex = resolveRef(doc, e);
      if (isNode(ex) && 'value' in ex)
        out.push({ where: `${where} examples.${name}`, schema: h.schema, value: ex.value });
    }
  schemaExamples(resolveRef(doc, h.schema), `${where} schema`, out);
}

function responseExamples(doc: unknown, response: unknown, where: string, out: FoundExample[]): void {
  const r = resolveRef(doc, response);
  if (!isNode(r)) return;
  for (const [name, h] of Object.entries((r.headers as Node | undefined) ?? {}))
    holderExamples(doc, h, `${where} header ${name}`, out);
  for (const [type, m] of Object.entries((r.content as Node | undefined) ?? {}))
    holderExamples(doc, m, `${where} ${type}`, out);
}

export function collectExamples(doc: {
  paths: Record<string, Record<string, Node>>;
  components: Record<string, Record<string, unknown> | undefined>;
}): FoundExample[] {
  const out: FoundExample[] = [];
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const at = `${method.toUpperCase()} ${path}`;
      for (const p of (op.parameters as Node[] | undefined) ?? [])
        holderExamples(
          doc,
          p,
          `${at} parameter ${String(resolveRef(doc, p) && (resolveRef(doc, p) as Node).name)}`,
          out,
        );
      const body = resolveRef(doc, op.requestBody);
      if (isNode(body))
        for (const [type, m] of Object.entries((body.content as Node | undefined) ?? {}))
          holderExamples(doc, m, `${at} requestBody ${type}`, out);
      for (const [status, r] of Object.entries((op.responses as Node | undefined) ?? {}))
        responseExamples(doc, r, `${at} ${status}`, out);
    }
  const c = doc.components;
  for (const [name, s] of Object.entries(c.schemas ?? {}))
    schemaExamples(s, `components.schemas.${name}`, out);
  for (const [name, h] of Object.entries(c.headers ?? {}))
    holderExamples(doc, h, `components.headers.${name}`, out);
  for (const [name, r] of Object.entries(c.responses ?? {}))
    responseExamples(doc, r, `components.responses.${name}`, out);
  return out;
}
