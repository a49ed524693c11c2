import { validate as run, type StructError } from 'superstruct';
import { type Issue, validationError } from '../core/errors';
import { GIVEN_ONCE, givenTwice, kindOf } from './body-guard';
import { ENUM_LIST, QUERY_PLUS_NOTE, type Schema } from './schema';

/** Validates (with coercion, for query strings) and returns the value, or throws 400 with every issue. */
export function validateInput<T>(value: unknown, schema: Schema<T>, where: 'body' | 'query' | 'path'): T {
  let failures: Failure[];
  try {
    const [error, result] = run(value, schema.struct, { coerce: true });
    if (!error) return result as T;
    // Read here: superstruct finds the failures after the first lazily, and that can throw too.
    failures = error.failures();
  } catch (thrown) {
    // superstruct writes each failure's message as it finds it, with `${value}`: an object whose
    // `toString` is not a function (`{"toString": null}`) throws there. The same input, with every
    // object and array made printable, gives the same failures without throwing; we never show
    // those messages anyway (see describe).
    const [error] = run(printable(value), schema.struct, { coerce: true });
    if (!error) throw thrown;
    failures = error.failures();
  }
  const issues = issuesOf(failures, where);
  if (where === 'query') listsGoInOne(issues, schema.json);
  if (where !== 'query')
    for (const issue of issues)
      if (issue.message.endsWith(QUERY_PLUS_NOTE))
        issue.message = issue.message.slice(0, -QUERY_PLUS_NOTE.length);
  throw validationError(issues, messageFor(where));
}

/**
 * A parameter given twice that takes several values in one (its description says comma-separated:
 * GET /reservations?status=) is told how: a client library spelling a list as a repeated parameter
 * meets this first.
 */
function listsGoInOne(issues: Issue[], json: unknown): void {
  const props = (json as { properties?: Record<string, { description?: string }> }).properties;
  for (const issue of issues)
    if (issue.message.endsWith(REPEATED) && props?.[issue.path]?.description?.includes('comma-separated'))
      issue.message = `${issue.message.slice(0, -REPEATED.length)}${REPEATED}: several values go comma-separated in one (${issue.path}=A,B)`;
}

const REPEATED = GIVEN_ONCE;

const messageFor = (where: string) =>
  where === 'body'
    ? 'The request body is invalid'
    : where === 'query'
      ? 'The query string is invalid'
      : 'The path is invalid';

export function issuesOf(from: StructError | Failure[], where: string): Issue[] {
  const failures = Array.isArray(from) ? from : from.failures();
  const seen = new Set<string>();
  const issues: Issue[] = [];
  // A value of the wrong kind has no fields of its own: superstruct still checks an array's indexes
  // against an object's properties ("customer.0 is not a known property"); only its kind is reported.
  const wrongKind = failures
    .filter((f) => !f.refinement && f.type !== 'never' && f.value !== undefined)
    .map((f) => `${f.path.map(String).join('.')}.`);
  for (const f of failures) {
    const path = f.path.map(String).join('.');
    if (wrongKind.some((p) => p === '.' || `${path}.`.startsWith(p)) && !wrongKind.includes(`${path}.`))
      continue;
    const issue = describe(f, path, where);
    const key = `${issue.path}|${issue.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

type Failure = ReturnType<StructError['failures']>[number];

/** What a built-in type expects, in words. */
const EXPECTED: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  type: 'an object',
  record: 'an object',
  array: 'an array',
  never: 'absent',
};

/** What a query-string integer or boolean must look like (the text schema.ts reads). */
const QUERY_TEXT: Record<string, string> = {
  integer: 'an integer in plain decimal digits (such as 2: no +, decimal point, exponent or space)',
  boolean: 'true or false',
};

/**
 * One issue per failure. Messages are written here from the failure's type and refinement (and, for
 * our own refinements, their sentence): superstruct's messages quote the received value, which may be
 * a megabyte long.
 */
function describe(f: Failure, path: string, where: string): Issue {
  const field = path || where;
  if (f.type === 'never') {
    const { explained } = f as Failure & { explained?: string };
    return {
      path,
      code: 'unknown_property',
      message: explained ? `${field} is not allowed here: ${explained}` : `${field} is not a known property`,
    };
  }
  if (f.value === undefined && f.path.length > 0 && !f.refinement)
    return { path, code: 'required', message: `${field} is required` };
  if (f.refinement === 'size' || f.refinement === 'min' || f.refinement === 'max' || f.refinement === 'range')
    // These messages hold only the bounds and a length or number.
    return { path, code: 'out_of_range', message: `${field}: ${bounded(plain(f.message))}` };
  // A comma-separated list of listed values (schema.ts enumList): a value outside them, as for an enum.
  if (f.refinement === ENUM_LIST)
    return { path, code: 'invalid_enum', message: `${field} ${bounded(f.message)}` };
  if (f.refinement === 'pattern')
    return { path, code: 'invalid_format', message: `${field} must match ${quoted(f.message)}` };
  if (f.refinement) {
    // Our own refinements return a sentence; a superstruct built-in one gets a generic sentence.
    const own = !f.message.startsWith('Expected');
    return {
      path,
      code: 'invalid_format',
      message: `${field} ${own ? bounded(f.message) : `fails the ${f.refinement} check`}`,
    };
  }
  // A query parameter given twice arrives as a list: said as the caller wrote it, not as "an array".
  if (where === 'query' && f.path.length === 1 && Array.isArray(f.value)) return givenTwice(path);
  // A query string carries only text: "must be an integer, not a string" would blame the one thing
  // the caller cannot change. Say what text is read instead (schema.ts: intQuery, boolQuery).
  if (where === 'query' && f.path.length === 1 && typeof f.value === 'string') {
    const shape = QUERY_TEXT[f.type];
    if (shape)
      return {
        path,
        code: 'invalid_type',
        message: f.value === '' ? `${field} is empty: give ${shape}` : `${field} must be ${shape}`,
      };
  }
  const received = `, not ${kindOf(f.value)}`;
  // A string outside the list is a wrong value (its kind is right: no "not a string"); anything else
  // (null, a number, an object) is a wrong type.
  if (f.type === 'enums')
    return typeof f.value === 'string'
      ? { path, code: 'invalid_enum', message: `${field} must be one of ${quoted(f.message)}` }
      : { path, code: 'invalid_type', message: `${field} must be one of ${quoted(f.message)}${received}` };
  if (f.type === 'literal')
    return { path, code: 'invalid_enum', message: `${field} must be ${quoted(f.message)}${received}` };
  // A union states what it accepts (schema.ts).
  if (f.type === 'union') {
    const { explained } = f as Failure & { explained?: string };
    return {
      path,
      code: 'invalid_type',
      message: `${field} must be ${explained ?? 'another type'}${received}`,
    };
  }
  const expected = EXPECTED[f.type] ?? `of type ${f.type}`;
  return { path, code: 'invalid_type', message: `${field} must be ${expected}${received}` };
}

/** The first `…` quoted part of a superstruct message: the values or pattern we declared. */
function quoted(message: string): string {
  const start = message.indexOf('`');
  const end = message.indexOf('`', start + 1);
  return start >= 0 && end > start ? bounded(message.slice(start + 1, end)) : 'the expected format';
}

const plain = (m: string) => m.replace(/`/g, '');
const bounded = (m: string) => (m.length > 300 ? `${m.slice(0, 297)}...` : m);

const PRINT = () => '[value]';

/**
 * A copy of a JSON-like value whose objects and arrays print without calling anything the input
 * holds: each gets a non-enumerable Symbol.toPrimitive, which `${x}` uses first and keys, spreads and
 * JSON.stringify never see. Iterative: the value may be deep.
 */
export function printable(value: unknown): unknown {
  const wrap = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    const copy: unknown = Array.isArray(v) ? new Array(v.length) : {};
    Object.defineProperty(copy, Symbol.toPrimitive, { value: PRINT, enumerable: false });
    pending.push([v as Record<string, unknown>, copy as Record<string, unknown>]);
    return copy;
  };
  const pending: [Record<string, unknown>, Record<string, unknown>][] = [];
  const root = wrap(value);
  while (pending.length > 0) {
    const [from, to] = pending.pop() as [Record<string, unknown>, Record<string, unknown>];
    for (const key of Object.keys(from))
      Object.defineProperty(to, key, {
        value: wrap(from[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return root;
}
