// uvu's failure printer (format() in uvu/dist/index.mjs) trusts what a test threw: it reads
// `err.name.startsWith`, `details.split` and `err.stack.indexOf`. An ApiError's `details` is an object,
// so the printer throws; uvu's runner has a `return` in its `finally`, which swallows that throw: the
// suite stops at that test, prints nothing about it and exits 0. Anything thrown at uvu therefore goes
// through printableFailure first.
import { inspect } from 'node:util';
import { Assertion } from 'uvu/assert';

/** An Error whose name, message, stack and details are plain strings: what uvu's printer can print. */
export class PrintableFailure extends Error {
  override name = 'PrintableFailure';
  override stack: string;
  constructor(
    message: string,
    readonly details: string,
  ) {
    super(message);
    // No line break: uvu prints the stack after the first one, and `details` already holds the
    // thrown value's own stack (with its cause and errors).
    this.stack = message;
  }
}

const limits = { depth: 6, maxArrayLength: 50, maxStringLength: 4_000, breakLength: 100, colors: false };

/** Never throws, whatever `read` does. */
function attempt<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

function plainString(value: unknown): string {
  return attempt(() => (typeof value === 'string' ? value : inspect(value, limits)), '[uninspectable value]');
}

/** One line naming what was thrown: "ApiError: The request is invalid", "null", "a string: 'x'". */
export function headline(value: unknown): string {
  if (value === null || value === undefined) return `${value} was thrown`;
  if (typeof value !== 'object' && typeof value !== 'function')
    return `a ${typeof value} was thrown: ${plainString(value)}`;
  const name = attempt(() => (value as { name?: unknown }).name, undefined);
  const message = attempt(() => (value as { message?: unknown }).message, '[message getter threw]');
  const label =
    typeof name === 'string' && name ? name : attempt(() => value.constructor?.name, '') || 'object';
  if (message === undefined) return `${label} was thrown`;
  const text = plainString(message);
  return `${label}: ${text.split('\n')[0]}`;
}

/**
 * Everything util.inspect shows of the thrown value: its stack, own properties (an ApiError's status,
 * code and details), `[cause]` and an AggregateError's `[errors]`, with their stacks. Falls back to the
 * own properties one by one when inspect itself throws (a getter or a proxy that throws).
 */
export function fullDescription(value: unknown): string {
  const whole = attempt(() => inspect(value, limits), undefined);
  if (whole !== undefined) return whole;
  const keys = attempt(() => Reflect.ownKeys(value as object), [] as (string | symbol)[]);
  const lines = keys.map((key) => {
    const shown = attempt(
      () => plainString((value as Record<string | symbol, unknown>)[key]),
      '[getter threw]',
    );
    return `  ${String(key)}: ${shown}`;
  });
  return ['[util.inspect threw on this value; its own properties:]', ...lines].join('\n');
}

/**
 * What to throw at uvu for `value`. uvu's own assertion errors pass unchanged (its printer made them
 * and shows their diff); anything else becomes a PrintableFailure. `context` names where it was thrown
 * when that is not the test itself ("before.each hook").
 */
export function printableFailure(value: unknown, context = ''): Error {
  if (!context && attempt(() => value instanceof Assertion && typeof value.stack === 'string', false))
    return value as Assertion;
  const prefix = context ? `${context}: ` : '';
  return new PrintableFailure(`${prefix}${headline(value)}`, fullDescription(value));
}

/** One failure for several thrown values (a test that threw, then its after.each hook threw too). */
export function combinedFailure(parts: { context: string; value: unknown }[]): Error {
  if (parts.length === 1) return printableFailure(parts[0]!.value, parts[0]!.context);
  const message = parts.map((p) => `${p.context || 'test'}: ${headline(p.value)}`).join('; ');
  const details = parts.map((p) => `── ${p.context || 'test'} ──\n${fullDescription(p.value)}`).join('\n');
  return new PrintableFailure(message, details);
}
