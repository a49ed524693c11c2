// Phone numbers and emails as stored and matched: every spelling of one number gives one key, read
// with the restaurant's country when national.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  defaultLang,
  emailKey,
  isPossiblePhone,
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
  // An extension has no E.164 form: kept as given.
  assert.is(normalizePhone('06 12 34 56 78 ext 5', 'FR').phone_number, '0612345678ext5');
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

t.run();
