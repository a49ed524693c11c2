// The runtime a CLI command runs on (src/cli/main.ts): the service's stores, opened for one command.
import type { Config } from '../config';
import { createLogger } from '../logger';
import { createRuntime, type Runtime } from '../runtime';
import type { CliCommand } from './registry';

export function openCliRuntime(
  config: Config,
  command: CliCommand,
  flags: Record<string, string | boolean>,
): Promise<Runtime> {
  return createRuntime(config, {
    // LOG_LEVEL as loadConfig read it (checked; set but empty is the default): pino refused "" with
    // "default level: must be included in custom levels". Unset, the CLI logs warnings only.
    logger: createLogger(process.env.LOG_LEVEL ? config.logLevel : 'warn'),
    ...(command.readModels === false ||
    (typeof command.readModels === 'function' && !command.readModels(flags))
      ? { projections: [] }
      : {}),
    // A command that only reads (audit verify, audit export, backup, the lists) never starts the log's
    // writer thread; one that writes starts it with its first append.
    logWriter: 'first write',
  });
}
