// Phone numbers and emails as stored and as matched. Matching never compares what a partner typed:
// it compares keys derived from the stored form, so "06 12 34 56 78", "+33 6 12 34 56 78" and
// "0033612345678" at a French restaurant are one customer.
import { domainToASCII, domainToUnicode } from 'node:url';
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js';
import { trimOldest } from '../../src/core/bounded-map';
import type { Lang } from './events';

export interface NormalizedPhone {
  /**
   * E.164 when libphonenumber can read the number, followed by `;ext=` and the extension's digits
   * when it has one (`+33612345606;ext=12`, RFC 3966's extension parameter); otherwise the input
   * without whitespace.
   */
  phone_number: string;
  /** The number's country, null when it could not be read or belongs to none (+800…). */
  country_code: string | null;
}

// The last numbers read, by spelling and country: one write reads its number several times (its
// check, its stored form, its matching key), and a CSV import does so for every row. Parsed numbers
// are never modified by their readers. Bounded: the oldest entries go first.
const PARSED_MAX = 4096;
const parsedCache = new Map<string, ReturnType<typeof parsePhoneNumberFromString>>();
function parse(raw: string, country: CountryCode | undefined) {
  const key = `${country ?? ''}|${raw}`;
  const hit = parsedCache.get(key);
  if (hit !== undefined || parsedCache.has(key)) return hit;
  const parsed = parsePhoneNumberFromString(raw, country ? { defaultCountry: country } : undefined);
  trimOldest(parsedCache, PARSED_MAX - 1);
  parsedCache.set(key, parsed);
  return parsed;
}

function readable(raw: string, country?: CountryCode) {
  const parsed = parse(raw, country);
  // "Possible" (right length for the country) rather than "valid" (a known range): a number in a
  // range newer than our metadata is still a number, and must match its other spellings. An
  // extension is kept (canonical below): "06 12 34 56 06 ext. 12" and "+33 6 12 34 56 06 ext. 12"
  // are one number.
  return parsed?.isPossible() ? parsed : undefined;
}

type Parsed = NonNullable<ReturnType<typeof parse>>;

/** The one stored form of a readable number: E.164, then `;ext=<digits>` when it has an extension. */
const canonical = (parsed: Parsed) => (parsed.ext ? `${parsed.number};ext=${parsed.ext}` : parsed.number);

/** "+" (when leading) and digits: the key of a number libphonenumber cannot read. */
const digitsKey = (text: string) => text.replace(/\s+/g, '').replace(/(?!^\+)[^\d]/g, '');

const E164ISH = /^\+\d+$/;

const countryOf = (restaurantCountry: string | null) =>
  restaurantCountry && isSupportedCountry(restaurantCountry) ? (restaurantCountry as CountryCode) : undefined;

// What a typed phone number may hold: digits and the usual punctuation, then optionally an extension.
// libphonenumber alone would find a number inside any text ("call +33…"), and store the number while
// the partner sent a sentence.
const PHONE_TEXT = /^\+?[\d\s().\-/]+(?:\s*(?:ext\.?|x|#|;ext=)\s*\d{1,10})?$/i;

export const PHONE_REFUSED =
  "is not a possible phone number: give it in international form (+33 6 12 34 56 78) or as a national number of the restaurant's country";

/**
 * Whether a partner's phone number can be stored: it must be a possible number (the right length
 * for its country), written in international form or nationally for the restaurant's country.
 * Already-stored values are never re-judged; this is for input only.
 */
export function isPossiblePhone(raw: string, restaurantCountry: string | null): boolean {
  if (!PHONE_TEXT.test(raw.trim())) return false;
  return parse(raw, countryOf(restaurantCountry))?.isPossible() === true;
}

/** Reads a phone number; a national spelling is read with the restaurant's country. */
export function normalizePhone(raw: string, restaurantCountry: string | null): NormalizedPhone {
  const parsed = readable(raw, countryOf(restaurantCountry));
  // A number valid nowhere precisely (a fictional range of a shared calling code such as +44) takes
  // the calling code's main country, which libphonenumber lists first.
  if (parsed)
    return {
      phone_number: canonical(parsed),
      country_code: parsed.country ?? parsed.getPossibleCountries()[0] ?? null,
    };
  return { phone_number: raw.replace(/\s+/g, ''), country_code: null };
}

/**
 * The matching key of a stored phone number: its canonical form (E.164, plus `;ext=<digits>` for an
 * extension), or for a number libphonenumber cannot read, its digits (and a leading +), so that
 * punctuation alone never tells two spellings apart.
 */
export function phoneKey(stored: string): string {
  // "+" and digits only: either E.164 already, or an unreadable number whose key is these very
  // characters. Either way the key is the stored form, and replays skip a parse per customer.
  if (E164ISH.test(stored)) return stored;
  // An international form with an extension stored before extensions were kept
  // (`+33612345606ext12`) keys to its canonical form too: a rebuild of the read models re-keys it.
  const parsed = stored.startsWith('+') ? readable(stored) : undefined;
  if (parsed) return canonical(parsed);
  return digitsKey(stored);
}

/** The key a partner's phone (any spelling) is looked up by. */
export const phoneLookupKey = (raw: string, restaurantCountry: string | null) =>
  phoneKey(normalizePhone(raw, restaurantCountry).phone_number);

/**
 * The keys customers stored before extensions were kept may carry for a partner's number with an
 * extension, looked up besides phoneLookupKey (none for a number without one). Such a number was
 * stored as typed without whitespace and keyed on its digits: a national spelling
 * (`0612345606ext.12` → `061234560612`) holds no country, so no rebuild can give it the canonical
 * key; an international one (`+3361234560612`) is re-keyed by a rebuild of the read models, and
 * looked up here for stores not rebuilt yet. Each spelling a partner would use: as typed, the
 * national form, the international form; a "+" key that is itself a possible number is left out
 * (it is another number's key, never a legacy one).
 */
export function legacyPhoneKeys(raw: string, restaurantCountry: string | null): string[] {
  const parsed = readable(raw, countryOf(restaurantCountry));
  if (!parsed?.ext) return [];
  const keys = new Set([
    digitsKey(raw),
    digitsKey(parsed.formatNational()).replace(/^\+/, ''),
    `+${digitsKey(parsed.formatInternational()).replace(/^\+/, '')}`,
  ]);
  keys.delete(canonical(parsed));
  return [...keys].filter((k) => /\d/.test(k) && !(k.startsWith('+') && readable(k)));
}

/**
 * A key that can identify someone: it holds a digit. Text without any ("abcdefg", kept from before
 * phone numbers were checked) would otherwise key to "" and match every other such customer.
 */
export const matchablePhoneKey = (key: string | null): string | null => (key && /\d/.test(key) ? key : null);

/** Emails match case-insensitively (spec §4); surrounding whitespace is never meaningful. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/**
 * The other keys the address of email key `key` may be stored under: its internationalised domain in
 * the other spelling. Writes store the ASCII form (`jean@xn--exmple-cua.fr`, src/core/email.ts);
 * addresses stored before that rule, and a partner's CRM, may hold the Unicode one (`jean@exämple.fr`).
 * A key given decomposed (NFD) finds both, since IDNA composes it; the spellings given back are the
 * ASCII and the composed (NFC) ones, so an address stored decomposed is not found. An address with an ASCII domain and no `xn--` label has none (the usual case,
 * answered without parsing the domain).
 */
export function emailKeySpellings(key: string): string[] {
  const at = key.lastIndexOf('@');
  if (at < 0) return [];
  const domain = key.slice(at + 1);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, by its bounds
  if (/^[\x00-\x7f]*$/.test(domain) && !domain.includes('xn--')) return [];
  const local = key.slice(0, at);
  const ascii = domainToASCII(domain);
  if (!ascii) return [];
  const spellings = new Set([`${local}@${ascii}`, `${local}@${domainToUnicode(ascii)}`]);
  spellings.delete(key);
  return [...spellings].filter((k) => !k.endsWith('@'));
}

/**
 * The countries (ISO 3166-1 alpha-2, as libphonenumber names a number's region) whose language is one
 * of ours: it is their only official one, or the one nearly all of their people speak. France's
 * overseas regions and collectivities have calling codes and regions of their own (+590 GP, +262 RE…)
 * and are France. Countries with several languages of which none prevails (CH, BE, LU, CA…) are not
 * listed: their guests are written to in English.
 */
const LANG_BY_COUNTRY: Readonly<Record<string, Lang>> = {
  ...langOf('FR', 'FR MC GP MQ GF RE YT PM BL MF NC PF WF BJ BF CD CG CI GA GN ML NE SN TG'),
  ...langOf('IT', 'IT SM VA'),
  ...langOf('ES', 'ES MX AR CO PE VE CL EC GT CU BO DO HN PY SV NI CR PA UY PR'),
  ...langOf('DE', 'DE AT LI'),
  ...langOf('PT', 'PT BR AO MZ CV GW ST'),
};

function langOf(lang: Lang, countries: string): Record<string, Lang> {
  return Object.fromEntries(countries.split(' ').map((c) => [c, lang]));
}

/**
 * A new customer's language when none is given: the phone's country when it speaks one of ours,
 * English for any other known phone country, else the restaurant's country, else English.
 */
export function defaultLang(phoneCountry: string | null, restaurantCountry: string | null): Lang {
  if (phoneCountry) return LANG_BY_COUNTRY[phoneCountry] ?? 'EN';
  return (restaurantCountry && LANG_BY_COUNTRY[restaurantCountry]) || 'EN';
}
