// `npm run cli -- <command> [flags]`: the operator's tool. Works on the same data as the server.
import { ConfigError, loadConfig } from '../config';
import { ApiError } from '../core/errors';
import { registerModules } from '../modules';
import { openCliRuntime } from './cli-runtime';
import { registerAllCliCommands } from './commands';
import { requireLog } from './log-required';
import {
  type CliCommand,
  CliUsageError,
  cliCommands,
  parseFlags,
  rejectStrayArguments,
  rejectUnknownFlags,
  scanFlags,
} from './registry';

/** What a shell reports for a process a SIGPIPE ended (128 + 13): its output is incomplete. */
const STDOUT_CLOSED = 141;

/**
 * What a script reads from the exit: 2 tells "not run as given" (fix the command line or the
 * environment) from 1, "ran and failed, or found problems" (a damaged log, a refusal of the service).
 */
const EXIT_CODES = [
  'Exit codes: 0 done',
  '  1 the command ran and failed or found problems (audit verify found problems, the log unreadable, the service refused it: not found, conflict, invalid value)',
  '  2 usage: not run as given, nothing done (an unknown command or flag, a flag repeated, missing or without its value, a word left over, a flag value the CLI refuses such as an --out that exists, an invalid environment variable, a DATA_DIR holding no event log)',
  `  ${STDOUT_CLOSED} stdout closed before the output ended (a reader that stopped early: | head), nothing printed about it`,
].join('\n');

function help(only: readonly CliCommand[] = cliCommands()): string {
  const lines = ['Usage: npm run cli -- <command> [flags]', '', 'Commands:'];
  for (const c of only) lines.push(`  ${c.name.padEnd(28)} ${c.summary}`, `  ${''.padEnd(28)}   ${c.usage}`);
  lines.push(
    '',
    'Environment: the same as the server (DATA_DIR, STORE, EVENTSTORE_URL, MONGODB_URL, …).',
    '',
    EXIT_CODES,
  );
  return lines.join('\n');
}

/**
 * A reader that stops early (`audit export … | head -1`) closes stdout: the CLI ends there, quietly,
 * with the code a shell gives a SIGPIPE (Node ignores the signal, and the write's EPIPE printed
 * "error: write EPIPE", exit 1, as for a failed command; console.log dropped it and went on, exit 0,
 * as if everything had been read). `set -o pipefail` still tells the output was cut.
 */
function endOnClosedStdout(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(STDOUT_CLOSED);
    console.error(`error: cannot write the output: ${err.message}`);
    process.exit(1);
  });
}

async function main(args: string[]): Promise<number> {
  endOnClosedStdout();
  registerModules();
  registerAllCliCommands();
  // `help`, `help keys`, `help keys create`: the same as --help.
  const helpWord = args[0] === 'help';
  const argv = helpWord ? args.slice(1) : args;
  const words = argv.filter((a) => !a.startsWith('-'));
  const command = cliCommands().find((c) => {
    const parts = c.name.split(' ');
    return parts.every((p, i) => words[i] === p);
  });
  const asked = helpWord || argv.includes('--help') || argv.includes('-h') || argv.length === 0;
  if (!command && !asked) {
    // A mistyped command says so, on stderr, before the list (not the list alone on stdout).
    const typed = scanFlags(argv).positionals;
    // The words of a command with flags before or among them (`--restaurant r keys list`, `keys
    // --restaurant r list`): the command is found by its leading words, which a flag's value broke.
    const meant = cliCommands().find((c) => c.name.split(' ').every((p, i) => typed[i] === p));
    const group = cliCommands().filter((c) => typed.length > 0 && c.name.startsWith(`${typed[0]} `));
    const what = meant
      ? `the command comes first, then its flags: npm run cli -- ${meant.name} [flags] (got: ${argv.join(' ')})`
      : group.length
        ? `"${typed[0]}" needs one of: ${group.map((c) => c.name).join(', ')}`
        : typed.length
          ? `unknown command "${typed.join(' ')}"`
          : `no command, only flags (${argv.join(' ')})`;
    console.error(`error: ${what}\n\n${help()}`);
    return 2;
  }
  if (!command || asked) {
    // A group's name (`keys --help`): its commands only.
    const group = cliCommands().filter((c) => words.length > 0 && c.name.startsWith(`${words[0]} `));
    if (command)
      console.log(
        `${command.name}: ${command.summary}\n  npm run cli -- ${command.name} ${command.usage}\n\n${EXIT_CODES}`,
      );
    else console.log(help(group.length ? group : undefined));
    return 0;
  }
  const rest = argv.slice(argv.indexOf(command.name.split(' ').at(-1) as string) + 1);
  const { values, positionals } = parseFlags(rest, command.switches);
  // A flag the command does not take, or a word left over, is refused before the stores are opened
  // (and the log replayed).
  if (command.flags) rejectUnknownFlags({ flags: values }, command.flags);
  rejectStrayArguments({ positionals }, command);
  const config = loadConfig();
  for (const w of config.warnings) console.error(`warning: ${w}`);
  if (config.store === 'embedded') requireLog(command, config.dataDir);
  const rt = await openCliRuntime(config, command, values);
  try {
    await command.run({
      rt,
      flags: values,
      positionals,
      out: (l, end) => {
        if (end === undefined) console.log(l);
        else process.stdout.write(l + end);
      },
    });
    return 0;
  } finally {
    await rt.close();
  }
}

/**
 * A write to a closed stdout marks it errored at once, but a socket emits the error only once its
 * handle is closed, on a later turn of the event loop: a command that ends before then reads as done.
 */
const stdoutClosed = (): boolean =>
  (process.stdout.errored as NodeJS.ErrnoException | null)?.code === 'EPIPE';

main(process.argv.slice(2)).then(
  (code) => process.exit(stdoutClosed() ? STDOUT_CLOSED : code),
  (err) => {
    // Only the write's own failure: a command's failure after the reader left is still reported.
    if ((err as NodeJS.ErrnoException | null)?.code === 'EPIPE') process.exit(STDOUT_CLOSED);
    if (err instanceof CliUsageError || err instanceof ConfigError) {
      console.error(`error: ${err.message}\n(run with --help)`);
      process.exit(2);
    } else if (err instanceof ApiError) {
      const issues = (err.details?.issues as { path: string; message: string }[] | undefined) ?? [];
      console.error(`error: ${err.message}${issues.map((i) => `\n  - ${i.path}: ${i.message}`).join('')}`);
    } else console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
