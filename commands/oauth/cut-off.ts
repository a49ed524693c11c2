// An operator's cut-off of an application (`applications disable --disconnect`): what it bars. The
// cut-off is the store position of that disabling; whatever the application was given before it — a
// code, a token — is barred for good, even once the application is enabled again, and what it is given
// after works. Positions, not clocks: the CLI and the API processes that issue tokens need not agree
// on the time, the log orders them all.
import { positionToString } from '../../src/ports/event-store';

/** Whether the cut-off at `cutOff` bars what was issued at `issued` (null: no such position, nothing barred). */
export const cutOffBars = (issued: bigint | null, cutOff: bigint | null): boolean =>
  issued !== null && cutOff !== null && issued < cutOff;

/**
 * The read model's form of `cutOffBars` for tokens (projections/api-keys.ts): the OAuth tokens of
 * `clientId` created before the cut-off at `cutOff` and not marked by an earlier one. Positions are
 * compared as `positionToString` writes them (fixed width: the text orders as the number does).
 */
export const cutOffFilter = (clientId: string, cutOff: bigint) => ({
  type: 'OAUTH',
  'application.id': clientId,
  created_position: { $lt: positionToString(cutOff) },
  cut_off_at: null,
});
