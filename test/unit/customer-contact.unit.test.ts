// Phone numbers and emails as stored and matched: every spelling of one number gives one key, read
// with the restaurant's country when national.
import fc from 'fast-check';
import { type CountryCode, getCountries, getExampleNumber } from 'libphonenumber-js';
import examples from 'libphonenumber-js/examples.mobile.json';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  defaultLang,
  emailKey,
  isPossiblePhone,
  legacyPhoneKeys,
  matchablePhoneKey,
  normalizePhone,
  phoneKey,
  phoneLookupKey,
} from '../../commands/customers/contact';
import { profileIssues } from '../../commands/customers/prepare';

const t = suite('customer contact details');

const SAME: [string, string | null, string[], string][] = [
  [
    'FR mobile at a French restaurant',
    'FR',
    [
      '0612345678',
      '06 12 34 56 78',
      '06.12.34.56.78',
      '06-12-34-56-78',
      '+33612345678',
      '+33 6 12 34 56 78',
      '0033 6 12 34 56 78',
      '0033612345678',
      '+33 (0)6 12 34 56 78',
      '\t06 12 34 56 78 ',
    ],
    '+33612345678',
  ],
  [
    'FR mobile, international spellings anywhere',
    'IT',
    ['+33612345678', '+33 6 12 34 56 78', '0033 6 12 34 56 78'],
    '+33612345678',
  ],
  [
    'IT landline at an Italian restaurant',
    'IT',
    ['06 9876 5432', '+39 06 9876 5432', '0039 06 9876 5432'],
    '+390698765432',
  ],
  [
    'US number at a French restaurant',
    'FR',
    ['+1 415 555 2671', '+1 (415) 555-2671', '001 415 555 2671'],
    '+14155552671',
  ],
  [
    'FR number with an extension: E.164 then ;ext=',
    'FR',
    [
      '06 12 34 56 06 ext. 12',
      '+33 6 12 34 56 06 ext. 12',
      '0612345606ext.12',
      '+33612345606ext12',
      '06 12 34 56 06 x12',
      '06 12 34 56 06 #12',
      '0033 6 12 34 56 06 ext 12',
      '+33612345606;ext=12',
    ],
    '+33612345606;ext=12',
  ],
];

for (const [what, country, spellings, e164] of SAME) {
  t(`${what}: stored E.164, one key`, () => {
    for (const raw of spellings) {
      assert.is(normalizePhone(raw, country).phone_number, e164, raw);
      assert.is(phoneLookupKey(raw, country), e164, raw);
    }
  });
}

t('a national spelling means another number in another country', () => {
  assert.is(phoneLookupKey('06 12 34 56 78', 'FR'), '+33612345678');
  assert.is(phoneLookupKey('06 12 34 56 78', 'IT'), '+390612345678');
  assert.is.not(phoneLookupKey('020 7946 0958', 'FR'), phoneLookupKey('+44 20 7946 0958', 'FR'));
});

t('a number libphonenumber cannot read is kept without whitespace and matched on its digits', () => {
  assert.equal(normalizePhone('12 345', 'FR'), { phone_number: '12345', country_code: null });
  assert.equal(normalizePhone('+999 123 45', 'FR'), { phone_number: '+99912345', country_code: null });
  assert.is(phoneLookupKey('12.345', 'FR'), phoneLookupKey('12 345', 'FR'));
  assert.is(phoneKey('+999-123-45'), '+99912345');
  assert.is.not(phoneLookupKey('12345', 'FR'), phoneLookupKey('123456', 'FR'));
  // An extension is kept after the E.164 form, and tells two lines of one number apart.
  assert.equal(normalizePhone('06 12 34 56 78 ext 5', 'FR'), {
    phone_number: '+33612345678;ext=5',
    country_code: 'FR',
  });
  assert.is.not(phoneLookupKey('06 12 34 56 78 ext 5', 'FR'), phoneLookupKey('06 12 34 56 78', 'FR'));
  assert.is.not(phoneLookupKey('06 12 34 56 78 ext 5', 'FR'), phoneLookupKey('06 12 34 56 78 ext 6', 'FR'));
});

t('the country of the number, or null; an unsupported restaurant country reads nothing nationally', () => {
  assert.is(normalizePhone('06 12 34 56 78', 'FR').country_code, 'FR');
  assert.is(normalizePhone('+44 7700 900123', 'FR').country_code, 'GB');
  assert.is(normalizePhone('+800 1234 5678', 'FR').country_code, null);
  assert.equal(normalizePhone('06 12 34 56 78', 'XX'), { phone_number: '0612345678', country_code: null });
  assert.equal(normalizePhone('06 12 34 56 78', null), { phone_number: '0612345678', country_code: null });
});

t('the key of a stored number equals the lookup key of any of its spellings', () => {
  for (const raw of ['06 12 34 56 78', '+44 20 7946 0958', '12 345', '+999 1']) {
    assert.is(phoneKey(normalizePhone(raw, 'FR').phone_number), phoneLookupKey(raw, 'FR'), raw);
  }
});

t('a number with an extension stored before extensions were kept is found by its old keys', () => {
  // Stored as typed without whitespace, keyed on its digits (what phoneKey still gives a national
  // form, which holds no country); an international one is re-keyed by a rebuild.
  assert.is(phoneKey('0612345606ext.12'), '061234560612');
  assert.is(phoneKey('+33612345606ext12'), '+33612345606;ext=12');
  for (const raw of ['06 12 34 56 06 ext. 12', '+33 6 12 34 56 06 ext. 12', '+33612345606;ext=12']) {
    const legacy = legacyPhoneKeys(raw, 'FR');
    assert.ok(legacy.includes('061234560612'), raw);
    assert.ok(legacy.includes('+3361234560612'), raw);
  }
  assert.equal(legacyPhoneKeys('06 12 34 56 06', 'FR'), []);
  // A "+" digits key that is itself a possible number is another customer's key, never looked up.
  assert.not.ok(legacyPhoneKeys('+49 30 1234567 ext. 12', 'FR').includes('+4930123456712'));
});

t('emails match case-insensitively', () => {
  assert.is(emailKey('Ada.Lovelace@Example.COM'), 'ada.lovelace@example.com');
  assert.is(emailKey(' ada@example.com '), 'ada@example.com');
});

t('a new customer speaks the language of their phone, else of the restaurant, else English', () => {
  assert.is(defaultLang('IT', 'FR'), 'IT');
  assert.is(defaultLang('GB', 'FR'), 'EN');
  assert.is(defaultLang(null, 'ES'), 'ES');
  assert.is(defaultLang(null, 'NL'), 'EN');
  assert.is(defaultLang(null, null), 'EN');
});

t(
  "a phone country speaking one of our languages outside Europe is that language, France's overseas regions French",
  () => {
    // libphonenumber names +262 692… RE, +590 690… GP, +52… MX: they answered EN.
    for (const [country, lang] of [
      ['RE', 'FR'],
      ['GP', 'FR'],
      ['MQ', 'FR'],
      ['NC', 'FR'],
      ['SN', 'FR'],
      ['MX', 'ES'],
      ['AR', 'ES'],
      ['CO', 'ES'],
      ['AO', 'PT'],
      ['LI', 'DE'],
      ['VA', 'IT'],
    ] as const) {
      assert.is(defaultLang(country, 'FR'), lang, country);
      assert.is(defaultLang(null, country), lang, `restaurant in ${country}`);
    }
    // Several languages, none prevailing: English, as for any other country.
    for (const country of ['CH', 'BE', 'LU', 'CA']) assert.is(defaultLang(country, 'FR'), 'EN', country);
  },
);

t('input must be a possible number: international, or national for the restaurant country', () => {
  for (const [raw, country] of [
    ['+33 6 12 34 56 78', 'FR'],
    ['06 12 34 56 78', 'FR'],
    ['+44 7700 900123', null],
    ['+33 (0)6 12 34 56 78', 'FR'],
    ['06 12 34 56 78 ext 5', 'FR'],
    ['+1 (415) 555-2671', 'FR'],
  ] as const)
    assert.ok(isPossiblePhone(raw, country), raw);
  for (const [raw, country] of [
    ['hello world', 'FR'],
    ['call +33 6 12 34 56 78', 'FR'],
    ['tel:+33612345678', 'FR'],
    ['12 345', 'FR'],
    ['+999 123 45', 'FR'],
    ['06 12 34 56 78', null],
    ['06 12 34 56 78', 'XX'],
    ['+33 6 12 34 56 78 9', 'FR'],
    ['---', 'FR'],
  ] as const)
    assert.not.ok(isPossiblePhone(raw, country), raw);
});

t('the write side refuses an impossible number with an issue on phone_number', () => {
  assert.equal(
    profileIssues({ phone_number: 'hello world' }, 'FR').map((i) => `${i.path}:${i.code}`),
    ['phone_number:invalid_format'],
  );
  assert.equal(profileIssues({ phone_number: '06 12 34 56 78' }, 'FR'), []);
  assert.equal(profileIssues({ phone_number: null }, 'FR'), []);
  // A length bound is reported once, not twice.
  assert.equal(profileIssues({ phone_number: 'x' }, 'FR').length, 1);
});

t('a phone without any digit keys to nothing, so two such customers never match each other', () => {
  // Stored before numbers were checked ("abcdefg"), such a phone once keyed to "" and matched every other.
  assert.is(matchablePhoneKey(phoneKey('abcdefg')), null);
  assert.is(matchablePhoneKey(phoneLookupKey('zzzzz', 'FR')), null);
  assert.is(matchablePhoneKey(null), null);
  assert.is(matchablePhoneKey(phoneLookupKey('06 12 34 56 78', 'FR')), '+33612345678');
});

// Every country's example mobile number (libphonenumber's), at restaurants of other countries: a
// partner's CRM holds guests from everywhere. International spellings (E.164, spaced, the restaurant's
// own international prefix: 00 in Europe and Asia, 011 in North America) key as E.164 wherever the
// restaurant is; the national spelling at a restaurant of the number's own country too.
const IDD: Partial<Record<CountryCode, string>> = {
  FR: '00',
  US: '011',
  IN: '00',
  NP: '00',
  GB: '00',
  DE: '00',
};
const WITH_EXAMPLE = getCountries().filter((c) => getExampleNumber(c, examples) !== undefined);

t("property: any country's number, in any spelling, keys as its E.164 at any restaurant", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...WITH_EXAMPLE),
      fc.constantFrom(...(Object.keys(IDD) as CountryCode[]), 'AU', 'JP', 'BR'),
      (country, restaurant) => {
        const example = getExampleNumber(country, examples);
        if (!example) return false;
        const e164 = example.number;
        const spellings = [e164, example.formatInternational()];
        const idd = IDD[restaurant];
        if (idd) spellings.push(`${idd} ${example.formatInternational().slice(1)}`);
        for (const spelling of spellings)
          if (!isPossiblePhone(spelling, restaurant) || phoneLookupKey(spelling, restaurant) !== e164)
            return false;
        const national = example.formatNational();
        return (
          isPossiblePhone(national, country) &&
          phoneLookupKey(national, country) === e164 &&
          normalizePhone(national, country).phone_number === e164
        );
      },
    ),
    { numRuns: 1000 },
  );
});

t.run();
