// The bounds of spec §2.3 and §8, in one place: the HTTP schemas are built from these constants, and
// decide checks them again so that every other way in (inline reservation customers, the CLI, a
// messaging channel) holds to the same limits.

import { EMAIL_MAX, isEmail } from '../../src/core/email';
import type { Issue } from '../../src/core/errors';
import { BLANK_MESSAGE, charCount, NOT_BLANK } from '../../src/core/text';
import { LANGS } from './events';

export const BOUNDS = {
  name: { min: 1, max: 200 },
  phone_number: { min: 3, max: 40 },
  external_id: { min: 1, max: 255 },
  tag: { min: 1, max: 100 },
  tags: { max: 100 },
  note: { max: 10_000 },
  email: { max: EMAIL_MAX },
  /** Not in the spec: a TEXT custom field holds at most what a note holds. */
  text_field: { max: 10_000 },
} as const;

/** How a phone number is read and stored (spec §2.1, §2.3), for the document. */
export const PHONE_DESCRIPTION =
  "A possible phone number: international (+33 6 12 34 56 78, E.164 recommended) or national, read with the restaurant's country; anything else is refused (400). Stored in E.164 form, followed by `;ext=` and the extension's digits for a number with one (06 12 34 56 06 ext. 12 at a French restaurant: +33612345606;ext=12), so its national and international spellings match";

/** The writable fields as a partner sends them (before normalisation). */
export interface ProfileInput {
  name?: string;
  email?: string | null;
  phone_number?: string | null;
  lang?: string;
  external_id?: string | null;
  tags?: string[];
  note?: string | null;
  custom_fields?: Record<string, unknown>;
  newsletter_consent?: boolean;
}

// Characters (code points), as the HTTP schema counts them, so both layers agree on the edge.
const len = charCount;

/** Every bound a field breaks, one issue per field (custom field values are checked elsewhere). */
export function checkBounds(input: ProfileInput): Issue[] {
  const issues: Issue[] = [];
  const range = (path: string, message: string) => issues.push({ path, code: 'out_of_range', message });
  const format = (path: string, message: string) => issues.push({ path, code: 'invalid_format', message });
  const { name, email, phone_number, external_id, tags, note, lang } = input;
  if (name !== undefined && (typeof name !== 'string' || len(name) < 1 || len(name) > BOUNDS.name.max))
    range('name', `name must be ${BOUNDS.name.min} to ${BOUNDS.name.max} characters`);
  else if (name !== undefined && !NOT_BLANK.test(name)) format('name', `name ${BLANK_MESSAGE}`);
  // Past the length only the length is reported (out_of_range), as the HTTP schema does: a CSV row
  // (checked here only) is refused with the API's reason.
  if (email !== undefined && email !== null && len(email) > BOUNDS.email.max)
    range('email', `email must be at most ${BOUNDS.email.max} characters`);
  else if (email !== undefined && email !== null && !isEmail(email))
    format('email', 'email must be an email address');
  if (
    phone_number !== undefined &&
    phone_number !== null &&
    (len(phone_number) < BOUNDS.phone_number.min || len(phone_number) > BOUNDS.phone_number.max)
  )
    range(
      'phone_number',
      `phone_number must be ${BOUNDS.phone_number.min} to ${BOUNDS.phone_number.max} characters`,
    );
  if (
    external_id !== undefined &&
    external_id !== null &&
    (len(external_id) < BOUNDS.external_id.min || len(external_id) > BOUNDS.external_id.max)
  )
    range(
      'external_id',
      `external_id must be ${BOUNDS.external_id.min} to ${BOUNDS.external_id.max} characters`,
    );
  else if (external_id !== undefined && external_id !== null && !NOT_BLANK.test(external_id))
    format('external_id', `external_id ${BLANK_MESSAGE}`);
  if (tags !== undefined) {
    if (tags.length > BOUNDS.tags.max) range('tags', `at most ${BOUNDS.tags.max} tags`);
    tags.forEach((t, i) => {
      if (typeof t !== 'string' || len(t) < BOUNDS.tag.min || len(t) > BOUNDS.tag.max)
        range(`tags.${i}`, `each tag must be ${BOUNDS.tag.min} to ${BOUNDS.tag.max} characters`);
      else if (!NOT_BLANK.test(t)) format(`tags.${i}`, `each tag ${BLANK_MESSAGE}`);
    });
  }
  if (note !== undefined && note !== null && len(note) > BOUNDS.note.max)
    range('note', `note must be at most ${BOUNDS.note.max} characters`);
  if (lang !== undefined && !(LANGS as readonly string[]).includes(lang))
    issues.push({ path: 'lang', code: 'invalid_enum', message: `lang must be one of ${LANGS.join(', ')}` });
  return issues;
}
