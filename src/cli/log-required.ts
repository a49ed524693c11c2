// Embedded, a command reads or writes DATA_DIR's event log: one that holds none (a mistyped or unset
// DATA_DIR, an empty directory) is refused before anything is opened. Opened, the runtime made the
// directory and an empty log in it, and the command answered on nothing: `audit verify` said
// "problems 0, events 0", exit 0, a clean verdict on a log it never read. Only the commands that set up
// a service (CliCommand.startsLog) may start a new log.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkLogPresent, logAbsence } from '../damaged-files';
import { checkDataDirFiles, LOCK_FILE } from '../data-dir-lock';
import { VERSIONS_STATUS_FILE } from '../projection/versions';
import { type CliCommand, CliUsageError, cliCommands } from './registry';

/** Throws a CliUsageError (exit 2) naming `dataDir` when it holds no log and `command` may not start one. */
export function requireLog(command: Pick<CliCommand, 'startsLog'>, dataDir: string): void {
  if (command.startsLog) return;
  const refuse = (why: string) => {
    const starting = cliCommands()
      .filter((c) => c.startsLog)
      .map((c) => c.name)
      .join(' or ');
    return new CliUsageError(
      `DATA_DIR ${dataDir} ${why}: check DATA_DIR (the server's data directory; unset, ./data). A new service starts with npm start, ${starting}; nothing was created`,
    );
  };
  if (!existsSync(dataDir)) throw refuse('does not exist, so it holds no event log');
  if (!statSync(dataDir).isDirectory()) throw refuse('is not a directory, so it holds no event log');
  // A file in the wrong shape, or a log that was there and is gone (traces of it beside), is named by
  // the checks the runtime makes, with their own advice (restore a backup), before this general one.
  checkDataDirFiles(dataDir);
  checkLogPresent(dataDir);
  const absence = logAbsence(dataDir);
  // A server started here (its lock file or its projections report, which only the server makes and
  // which stay after it stops): its DATA_DIR, whose log may hold nothing yet (a start without the
  // demo), not a mistyped path.
  if (absence !== null && [LOCK_FILE, VERSIONS_STATUS_FILE].some((f) => existsSync(join(dataDir, f)))) return;
  if (absence === 'missing') throw refuse('holds no event log (no events.sqlite)');
  if (absence === 'empty') throw refuse('holds no event log (its events.sqlite is empty)');
  if (absence === 'stub') throw refuse('holds no event log (its events.sqlite holds no event)');
}
