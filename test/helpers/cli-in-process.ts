// Runs a CLI command against a test service's runtime (or a bare runtime), in this process, and reads a
// data directory's raw bytes: what the erasure suites check personal data against. Every CLI test that
// runs a command in process goes through runCli; test/helpers/cli-process.ts spawns the real CLI instead.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { registerAllCliCommands } from '../../src/cli/commands';
import { cliCommands } from '../../src/cli/registry';
import { registerModules } from '../../src/modules';
import type { Runtime } from '../../src/runtime';

/** What runCli runs against: anything holding a runtime (a TestService), or the runtime itself. */
export type CliTarget = { rt: Runtime } | Runtime;

/** A command's own error, as runCli rethrows it, carrying the lines the command printed before it threw. */
export type CliFailure = Error & { printed: string[] };

/**
 * The command's printed lines. The commands are those the real CLI has (src/cli/main.ts registers the
 * modules' and the platform's; both registrations are idempotent). A command that throws: its own
 * error object is rethrown unchanged (class and message, for the tests that check them) with what it
 * printed before as `printed`, and named with those lines at the end of its stack, which a failure report
 * shows.
 */
export async function runCli(
  target: CliTarget,
  name: string,
  flags: Record<string, string | boolean>,
  positionals: string[] = [],
): Promise<string[]> {
  registerModules();
  registerAllCliCommands();
  const command = cliCommands().find((c) => c.name === name);
  assert.ok(command, `no CLI command ${name}`);
  const rt = runtimeOf(target);
  const out: string[] = [];
  try {
    await command.run({ rt, flags, positionals, out: (l) => out.push(l) });
  } catch (err) {
    if (err instanceof Error && Object.isExtensible(err)) {
      Object.assign(err, { printed: out });
      const said = out.length
        ? `, which printed:${out.map((l) => `\n| ${l}`).join('')}`
        : ', which printed nothing';
      err.stack = `${err.stack ?? String(err)}\n${err.name} thrown by \`${name}\`${said}`;
    }
    throw err;
  }
  return out;
}

/** Runs a command that must fail: its error, as runCli rethrows it, after checking the log did not move. */
export async function refusedCli(
  target: CliTarget,
  name: string,
  flags: Record<string, string | boolean>,
  positionals: string[] = [],
): Promise<Error> {
  const rt = runtimeOf(target);
  const head = await rt.events.headPosition();
  const err = await runCli(rt, name, flags, positionals).then(
    () => assert.unreachable(`${name} ${JSON.stringify(flags)} succeeded`),
    (e: unknown) => e as Error,
  );
  assert.is(await rt.events.headPosition(), head, `${name} appended something before refusing`);
  return err as Error;
}

const runtimeOf = (target: CliTarget): Runtime => ('rt' in target ? target.rt : target);

/** The lines a command printed before it threw (runCli's failure), or [] for any other error. */
export const printedBy = (err: unknown): string[] =>
  err instanceof Error && Array.isArray((err as Partial<CliFailure>).printed)
    ? (err as CliFailure).printed
    : [];

/** Every byte of every file of the data directory (the log, its WAL, the key store), as latin1 text. */
export function rawDataFiles(dataDir: string): string {
  const text = readdirSync(dataDir)
    .filter((f) => !f.endsWith('.json'))
    .map((f) => {
      try {
        return readFileSync(join(dataDir, f)).toString('latin1');
      } catch {
        return '';
      }
    })
    .join('\n');
  // A search that read no log finds nothing and passes: the events' metadata (never sealed) must be there.
  if (!text.includes('"actor"')) throw new Error(`rawDataFiles: no event of the log was read in ${dataDir}`);
  return text;
}
