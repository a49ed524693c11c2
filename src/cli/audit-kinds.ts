// The kinds of `audit history` / `audit as-of --kind` as the operator reads and types them. The log
// calls a dashboard account a user (src/audit/subjects.ts, its `user-` stream); the docs, the actor
// kinds (`manager`) and the dashboard call it a manager, and so does the CLI: `--kind manager`, "a
// manager". `--kind user` still reads, for scripts written before.
import { auditSubjects } from '../audit/subjects';
import { CliUsageError } from './registry';

/** A subject kind's name where the CLI's differs from the log's. */
const SHOWN: Readonly<Record<string, string>> = { user: 'manager' };

const shown = (kind: string): string => SHOWN[kind] ?? kind;

/** The kinds `--kind` takes, as the help lists them. */
export const kindsForFlag = (): string[] => auditSubjects().map((s) => shown(s.kind));

/** `--kind`'s value as the log's kind; undefined when not given; a kind no subject has is refused. */
export function kindFromFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const kind = auditSubjects().find((s) => s.kind === value || shown(s.kind) === value)?.kind;
  if (kind === undefined)
    throw new CliUsageError(`unknown --kind ${value} (kinds: ${kindsForFlag().join(', ')})`);
  return kind;
}

/** "a manager", "an oauth-application": the kind with its article, for a sentence. */
export function kindInWords(kind: string): string {
  const word = shown(kind);
  // By sound, not by letter: "a user", "a unit", but "an unknown".
  return `${/^([aeio]|un)/.test(word) ? 'an' : 'a'} ${word}`;
}
