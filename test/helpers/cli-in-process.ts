// Runs a CLI command against a test service's runtime, in this process, and reads a data directory's
// raw bytes: what the erasure suites check personal data against.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { registerAllCliCommands } from '../../src/cli/commands';
import { cliCommands } from '../../src/cli/registry';
import type { TestService } from './service';

/** The command's printed lines; a failure carries what it printed before it threw. */
export async function runCli(
  svc: TestService,
  name: string,
  flags: Record<string, string | boolean>,
  positionals: string[] = [],
): Promise<string[]> {
  registerAllCliCommands();
  const command = cliCommands().find((c) => c.name === name);
  assert.ok(command, name);
  const out: string[] = [];
  try {
    await command.run({ rt: svc.rt, flags, positionals, out: (l) => out.push(l) });
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}\n${out.join('\n')}`);
  }
  return out;
}

/** Every byte of every file of the data directory (the log, its WAL, the key store), as latin1 text. */
export function rawDataFiles(dataDir: string): string {
  return readdirSync(dataDir)
    .filter((f) => !f.endsWith('.json'))
    .map((f) => {
      try {
        return readFileSync(join(dataDir, f)).toString('latin1');
      } catch {
        return '';
      }
    })
    .join('\n');
}
