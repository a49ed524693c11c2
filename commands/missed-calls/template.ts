// Message templates of a missed-call follow-up: which placeholders a body may hold, the values they
// take, and the text and provider parameters a message carries. Pure.
//
// A body names its values either by name ({{guest_name}}) or by position ({{1}} … {{5}}, in the order
// of PLACEHOLDERS), never both: WhatsApp templates are either named or positional, and the
// parameters Couvert sends follow the body's own form.
import { DateTime } from 'luxon';

export const PLACEHOLDERS = [
  'guest_name',
  'restaurant_name',
  'reservation_date',
  'reservation_time',
  'booking_link',
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

const RESERVATION_ONLY: readonly Placeholder[] = ['reservation_date', 'reservation_time'];
const TOKEN = /\{\{\s*([^{}]*?)\s*\}\}/g;

export interface ParsedBody {
  form: 'named' | 'positional' | 'none';
  /** The placeholders used, in the order parameters are sent (first use for named, index for positional). */
  used: Placeholder[];
  problems: string[];
}

export function parseBody(body: string): ParsedBody {
  const named: Placeholder[] = [];
  let maxIndex = 0;
  const problems: string[] = [];
  for (const m of body.matchAll(TOKEN)) {
    const token = m[1] ?? '';
    if (/^\d+$/.test(token)) {
      const n = Number(token);
      if (n < 1 || n > PLACEHOLDERS.length)
        problems.push(`{{${token}}} is not a placeholder: positions run from 1 to ${PLACEHOLDERS.length}`);
      else maxIndex = Math.max(maxIndex, n);
    } else if ((PLACEHOLDERS as readonly string[]).includes(token)) {
      if (!named.includes(token as Placeholder)) named.push(token as Placeholder);
    } else problems.push(`{{${token}}} is not a placeholder; known: ${PLACEHOLDERS.join(', ')} or 1 to 5`);
  }
  if (named.length && maxIndex) problems.push('use either named placeholders or positional ones, not both');
  if (named.length) return { form: 'named', used: named, problems };
  if (maxIndex) return { form: 'positional', used: PLACEHOLDERS.slice(0, maxIndex), problems };
  return { form: 'none', used: [], problems };
}

/** What the catalog refuses in a template body (paths are the body's). */
export function placeholderProblems(type: string, body: string): string[] {
  const parsed = parseBody(body);
  const problems = [...parsed.problems];
  if (type !== 'MISSED_CALL') return problems;
  // Positional parameters are sent from {{1}} up to the highest the body holds (WhatsApp numbers them
  // without gaps): {{5}} also sends {{3}} and {{4}}, the reservation's, though the body never wrote
  // them. Said so, rather than naming placeholders the author did not write.
  const written = new Set([...body.matchAll(TOKEN)].map((m) => (m[1] ?? '').trim()));
  const implied: string[] = [];
  for (const [i, p] of parsed.used.entries()) {
    if (!RESERVATION_ONLY.includes(p)) continue;
    const token = parsed.form === 'positional' ? String(i + 1) : p;
    if (written.has(token))
      problems.push(
        `a MISSED_CALL template has no reservation: {{${token}}}${token === p ? '' : ` (${p})`} applies to MISSED_CALL_WITH_RESERVATION`,
      );
    else implied.push(`{{${token}}} (${p})`);
  }
  if (implied.length)
    problems.push(
      `a MISSED_CALL template has no reservation: positional parameters are sent from {{1}} up to the highest the body uses ({{${parsed.used.length}}}), so it would also send ${implied.join(' and ')}; write a MISSED_CALL template with named placeholders ({{booking_link}})`,
    );
  return problems;
}

const LANGUAGE_BY_COUNTRY: Readonly<Record<string, string>> = {
  FR: 'fr',
  BE: 'fr',
  MC: 'fr',
  LU: 'fr',
  CH: 'fr',
  IT: 'it',
  SM: 'it',
  ES: 'es',
  DE: 'de',
  AT: 'de',
  PT: 'pt_PT',
  BR: 'pt_BR',
  GB: 'en_GB',
  IE: 'en_GB',
  US: 'en_US',
  NL: 'nl',
};

/** The template's language code: its own, else from the restaurant's country, else English. */
export const templateLanguage = (language: string | null | undefined, country: string | null) =>
  language ?? LANGUAGE_BY_COUNTRY[country ?? ''] ?? 'en';

/** A BCP 47 locale for dates from a WhatsApp language code (pt_BR → pt-BR). */
export const localeOf = (language: string) => language.replace('_', '-');

/** The greeting used when the guest's name is unknown (a customer created from the call itself). */
const UNKNOWN_GUEST: Readonly<Record<string, string>> = {
  fr: 'Madame, Monsieur',
  it: 'gentile cliente',
  es: 'estimado cliente',
  de: 'liebe Gäste',
  pt: 'caro cliente',
  nl: 'beste gast',
  en: 'there',
};

export const unknownGuest = (language: string) =>
  UNKNOWN_GUEST[language.split('_')[0] ?? 'en'] ?? (UNKNOWN_GUEST.en as string);

export interface RenderInput {
  body: string;
  language: string;
  /** null: the name is not known. */
  guestName: string | null;
  restaurantName: string;
  timezone: string;
  /** The reservation's start (ISO with offset), for MISSED_CALL_WITH_RESERVATION. */
  reservationStart: string | null;
  bookingLink: string | null;
}

export interface Rendered {
  text: string;
  form: ParsedBody['form'];
  /** In the order the provider expects them; `name` only for named templates. */
  parameters: { name: Placeholder; value: string }[];
  /** Placeholders the template uses that have no value (no reservation, no booking link). */
  missing: Placeholder[];
}

export function placeholderValues(input: RenderInput): Partial<Record<Placeholder, string>> {
  const values: Partial<Record<Placeholder, string>> = {
    guest_name: input.guestName ?? unknownGuest(input.language),
    restaurant_name: input.restaurantName,
  };
  if (input.reservationStart) {
    const start = DateTime.fromISO(input.reservationStart, { setZone: true })
      .setZone(input.timezone)
      .setLocale(localeOf(input.language));
    values.reservation_date = start.toLocaleString({ weekday: 'long', day: 'numeric', month: 'long' });
    values.reservation_time = start.toLocaleString(DateTime.TIME_SIMPLE);
  }
  if (input.bookingLink) values.booking_link = input.bookingLink;
  return values;
}

export function renderTemplate(input: RenderInput): Rendered {
  const parsed = parseBody(input.body);
  const values = placeholderValues(input);
  const missing = parsed.used.filter((p) => values[p] === undefined);
  const text = input.body.replace(TOKEN, (whole, token: string) => {
    const key = /^\d+$/.test(token) ? PLACEHOLDERS[Number(token) - 1] : (token as Placeholder);
    return key && values[key] !== undefined ? (values[key] as string) : whole;
  });
  return {
    text,
    form: parsed.form,
    parameters: parsed.used.map((name) => ({ name, value: values[name] ?? '' })),
    missing,
  };
}
