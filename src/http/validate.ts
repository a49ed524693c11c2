import { validate as run, type StructError } from 'superstruct';
import { type Issue, validationError } from '../core/errors';
import type { Schema } from './schema';

/** Validates (with coercion, for query strings) and returns the value, or throws 400 with every issue. */
export function validateInput<T>(value: unknown, schema: Schema<T>, where: 'body' | 'query' | 'path'): T {
  const [error, result] = run(value, schema.struct, { coerce: true });
  if (error) throw validationError(issuesOf(error, where), messageFor(where));
  return result as T;
}

const messageFor = (where: string) =>
  where === 'body'
    ? 'The request body is invalid'
    : where === 'query'
      ? 'The query string is invalid'
      : 'The path is invalid';

export function issuesOf(error: StructError, where: string): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const f of error.failures()) {
    const path = f.path.map(String).join('.');
    const issue = describe(f, path, where);
    const key = `${issue.path}|${issue.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

type Failure = ReturnType<StructError['failures']>[number];

function describe(f: Failure, path: string, where: string): Issue {
  const field = path || where;
  if (f.type === 'never')
    return { path, code: 'unknown_property', message: `${field} is not a known property` };
  if (f.value === undefined && f.path.length > 0 && !f.refinement)
    return { path, code: 'required', message: `${field} is required` };
  if (f.refinement === 'size' || f.refinement === 'min' || f.refinement === 'max')
    return { path, code: 'out_of_range', message: `${field}: ${plain(f.message)}` };
  if (f.refinement) {
    // Our own refinements return a sentence; superstruct's built-ins get a generic one.
    const own = !f.message.startsWith('Expected');
    return { path, code: 'invalid_format', message: `${field} ${own ? f.message : plain(f.message)}` };
  }
  // A string outside the list is a wrong value; anything else (a number, an object) is a wrong type.
  if (f.type === 'enums' && typeof f.value === 'string')
    return { path, code: 'invalid_enum', message: `${field}: ${plain(f.message)}` };
  return { path, code: 'invalid_type', message: `${field}: ${plain(f.message)}` };
}

const plain = (m: string) => m.replace(/`/g, '');
