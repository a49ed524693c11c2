// Operator commands. Each module registers its own; every command appends events through the
// ordinary command handlers, never writes a read model.
import type { Runtime } from '../runtime';

export interface CliContext {
  rt: Runtime;
  /** Parsed --flags (strings, or true for bare flags). */
  flags: Record<string, string | boolean>;
  positionals: string[];
  /**
   * Prints a line, ended with LF; `end` another ending instead: a CSV record is printed with
   * CSV_RECORD_END (CRLF, RFC 4180: src/core/csv.ts).
   */
  out: (line: string, end?: string) => void;
}

export interface CliCommand {
  /** e.g. "restaurants create" */
  name: string;
  summary: string;
  usage: string;
  /**
   * false: the command reads only the event log, so the CLI skips rebuilding the embedded read
   * models at start (which costs a whole replay on a large log); a function decides from the flags
   * (`audit verify --no-read-models` reads only the log).
   */
  readModels?: false | ((flags: Record<string, string | boolean>) => boolean);
  /**
   * Flags that take no value (`--json`): the word after one is a positional (`audit history --json
   * <id>`), not its value; `--json=false` and `--json false` still turn it off.
   */
  switches?: readonly string[];
  /**
   * Every flag the command takes: any other is refused (rejectUnknownFlags) before the command runs,
   * and by the CLI before it opens the stores. A command without it checks its flags itself.
   */
  flags?: readonly string[];
  /**
   * The command may run on a DATA_DIR that holds no log yet, and starts one: the commands that set up
   * a service. Every other one refuses such a DATA_DIR (src/cli/log-required.ts).
   */
  startsLog?: true;
  run(ctx: CliContext): Promise<void>;
}

/**
 * `--name value`, `--name=value`, and bare `--flag` (true); everything else is positional. A switch
 * of the command takes the next word only when it is `true` or `false`. A flag given twice is refused,
 * as the API refuses a parameter given twice: keeping the last value ran the command on something the
 * operator may not have meant (`--restaurant rest_a --restaurant rest_b` exported rest_b). No flag
 * takes several values by repetition: a list is comma-separated (`--scopes A,B`).
 */
export function parseFlags(
  args: string[],
  switches: readonly string[] = [],
): {
  values: Record<string, string | boolean>;
  positionals: string[];
} {
  const { values, positionals, repeated } = scanFlags(args, switches);
  if (repeated.length)
    throw new CliUsageError(
      `${repeated.map((f) => `--${f}`).join(', ')} ${repeated.length === 1 ? 'is' : 'are'} given more than once; give ${repeated.length === 1 ? 'it' : 'each'} once`,
    );
  return { values, positionals };
}

/** parseFlags without the refusal: the flags given more than once are listed instead. */
export function scanFlags(
  args: string[],
  switches: readonly string[] = [],
): {
  values: Record<string, string | boolean>;
  positionals: string[];
  repeated: string[];
} {
  const values: Record<string, string | boolean> = {};
  const positionals: string[] = [];
  const repeated: string[] = [];
  const set = (name: string, value: string | boolean) => {
    if (Object.hasOwn(values, name) && !repeated.includes(name)) repeated.push(name);
    values[name] = value;
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!a.startsWith('--')) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const next = args[i + 1];
    if (eq > 0) set(a.slice(2, eq), a.slice(eq + 1));
    else if (
      next !== undefined &&
      !next.startsWith('--') &&
      (!switches.includes(a.slice(2)) || next === 'true' || next === 'false')
    )
      set(a.slice(2), args[++i] as string);
    else set(a.slice(2), true);
  }
  return { values, positionals, repeated };
}

const commands: CliCommand[] = [];
export function registerCliCommand(command: CliCommand): void {
  const { flags } = command;
  commands.push({
    ...command,
    run(ctx) {
      if (flags !== undefined) rejectUnknownFlags(ctx, flags);
      rejectStrayArguments(ctx, command);
      return command.run(ctx);
    },
  });
}
export const cliCommands = (): readonly CliCommand[] => commands;

export class CliUsageError extends Error {
  override name = 'CliUsageError';
}

export function requireFlag(ctx: CliContext, name: string): string {
  const v = ctx.flags[name];
  // `--scopes` given without its value (the next word a flag, or none) is not a missing flag.
  if (v === true) throw new CliUsageError(`--${name} needs a value`);
  if (typeof v !== 'string' || v === '') throw new CliUsageError(`--${name} is required`);
  return v;
}

export function optionalFlag(ctx: CliContext, name: string): string | undefined {
  const v = ctx.flags[name];
  if (typeof v === 'boolean') throw new CliUsageError(`--${name} needs a value`);
  return v;
}

export function boolFlag(ctx: CliContext, name: string): boolean | undefined {
  const v = ctx.flags[name];
  if (v === undefined) return undefined;
  if (v === true || v === 'true') return true;
  if (v === 'false') return false;
  throw new CliUsageError(`--${name} takes true or false`);
}

/**
 * A command whose usage names no `<argument>` (other than a flag's `--flag <value>`) takes none: a word left over (`customers delete --id cus_1
 * cus_2`, a value whose flag was forgotten) is refused rather than ignored, which did only part of
 * what was asked.
 */
export function rejectStrayArguments(
  ctx: Pick<CliContext, 'positionals'>,
  command: Pick<CliCommand, 'name' | 'usage'>,
): void {
  // `<id>` after a flag (`--customer <id>`) is that flag's value; only one standing alone is an argument.
  if (ctx.positionals.length === 0 || /<[^>]+>/.test(command.usage.replace(/--[\w-]+ <[^>]+>/g, ''))) return;
  throw new CliUsageError(
    `unexpected argument${ctx.positionals.length === 1 ? '' : 's'} ${ctx.positionals.map((p) => JSON.stringify(p)).join(', ')}: ${command.name} takes only flags (${command.usage || 'none'}); give each value after its flag`,
  );
}

/** A mistyped flag (`--nmae`) must not be silently ignored: the command would do something else. */
export function rejectUnknownFlags(ctx: Pick<CliContext, 'flags'>, allowed: readonly string[]): void {
  const unknown = Object.keys(ctx.flags).filter((f) => !allowed.includes(f));
  if (unknown.length)
    throw new CliUsageError(
      `unknown flag${unknown.length === 1 ? '' : 's'} ${unknown.map((f) => `--${f}`).join(', ')} (accepted: ${allowed.map((f) => `--${f}`).join(', ') || 'none'})`,
    );
}
