// What a reported missed call must hold before anything is claimed or sent: a caller's number that
// reads as one line (E.164, no extension: the follow-up goes to the line that rang), and a time that
// is not ahead of the service's clock by more than a clock's drift.
import { BusinessRuleError, validationError } from '../../src/core/errors';
import { isE164 } from '../../src/ports/message-sender';
import { isPossiblePhone, normalizePhone, PHONE_REFUSED } from '../customers/contact';

/** How far ahead of the service's clock an `occurred_at` may be (the reporting system's clock drift). */
export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

/** Refuses a call the follow-up cannot use (400 with details.issues, or 422 OCCURRED_IN_FUTURE). */
export function refuseUnusableCall(
  input: { caller_phone_number: string; occurred_at?: string },
  country: string | null,
  nowMs: number,
): void {
  const normalized = normalizePhone(input.caller_phone_number, country).phone_number;
  if (!isPossiblePhone(input.caller_phone_number, country) || !isE164(normalized))
    throw validationError(
      [
        {
          path: 'caller_phone_number',
          code: 'invalid_format',
          // A number with an extension reads (contact.ts: E.164 then `;ext=`), but a caller's number
          // is the line that rang, and the follow-up goes to it: E.164 alone.
          message: normalized.includes(';ext=')
            ? 'caller_phone_number has an extension: give the number that called, in E.164 (+33612345678), without one'
            : `caller_phone_number ${PHONE_REFUSED}`,
        },
      ],
      'The request body is invalid',
    );
  if (input.occurred_at && Date.parse(input.occurred_at) > nowMs + FUTURE_TOLERANCE_MS)
    throw new BusinessRuleError(
      'OCCURRED_IN_FUTURE',
      'occurred_at is more than 5 minutes ahead of the service clock',
    );
}
