// `--scopes` of every command that takes one (keys create, keys update, applications register): one
// reading, so a value one command takes is never refused by another (`applications register --scopes
// ALL` was, while `keys create` took it). The scope names themselves are checked by the command's rules
// (checkScopes: an unknown one is refused, naming it).
import { PRIVILEGED_SCOPES, SCOPES } from '../core/scopes';
import { CliUsageError } from './registry';

/** What the usage lines say of the value. */
export const SCOPE_LIST_USAGE = 'CATALOG_READ,RESERVATIONS_READ|ALL';

/** What the usage lines say `ALL` gives: the privileged scopes too. */
export const SCOPE_ALL_HELP = `ALL: every scope, the privileged ${PRIVILEGED_SCOPES.join(' and ')} included`;

/**
 * Scope names separated by commas (spaces around them ignored), or `ALL` alone for every scope the
 * service knows (SCOPES, in their canonical order). `ALL` among other names is refused rather than
 * guessed at: it would read as every scope, whatever the others say.
 */
export function parseScopeList(raw: string): string[] {
  const names = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  if (!names.includes('ALL')) return names;
  if (names.length > 1)
    throw new CliUsageError(
      `--scopes: ALL stands alone (every scope); give either ALL or a list of scopes, not both (got ${raw})`,
    );
  return [...SCOPES];
}
