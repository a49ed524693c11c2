// The mutations of the write fuzzer (test/helpers/write-fuzz.ts): a valid body changed in one small,
// realistic way (one field at a boundary, in another script, null, removed; one extra or repeated
// member), so most writes still succeed and what is behind a 201/200 gets checked.
import fc from 'fast-check';
import type { JsonSchema } from '../../src/http/schema';
import { DELETE, leaves, withValue } from './schema-values';

/** What is sent: a value (JSON-encoded by the client) or a raw JSON text no value can spell. */
export type Sent = { value: unknown; raw?: undefined } | { raw: string; value?: undefined };

export interface Mutated {
  label: string;
  sent: Sent;
}

/** The schemas a path may be under (oneOf branches followed; a record's members under its values). */
export function schemasAt(json: JsonSchema, path: string[]): JsonSchema[] {
  let at: JsonSchema[] = [json];
  for (const k of path) {
    at = at.flatMap(branches).flatMap((s) => {
      if (s.type === 'array' && /^\d+$/.test(k) && s.items) return [s.items as JsonSchema];
      const p = (s.properties as Record<string, JsonSchema> | undefined)?.[k];
      if (p) return [p];
      return typeof s.additionalProperties === 'object' ? [s.additionalProperties as JsonSchema] : [];
    });
  }
  return at.flatMap(branches);
}

const branches = (s: JsonSchema): JsonSchema[] =>
  Array.isArray(s.oneOf) ? (s.oneOf as JsonSchema[]).flatMap(branches) : [s];

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** n code points of `unit` (one code point, of any width). */
const times = (unit: string, n: number) => (n <= 0 ? '' : unit.repeat(n));

/** Strings a person or a partner's system really sends, each inside the field's bounds when it can. */
function stringsFor(s: JsonSchema | undefined, current: string): string[] {
  const min = num(s?.minLength) ?? 0;
  const max = Math.min(num(s?.maxLength) ?? 300, 12_000);
  const out = [
    times('x', max),
    times('x', max + 1),
    times('😀', max),
    times('😀', max + 1),
    `${times('e\u0301', Math.floor(max / 2))}`,
    times('x', Math.max(min, 1)),
    times('😀', Math.max(min, 1)),
    '',
    ' ',
    `  ${current}  `,
    `${current}\n${current}`,
    `\u202e${current}`,
    `${current}\u0000`,
    'a\u0000b',
    '\u200b',
    '\ufeffLéa',
    'Zoë Ångström-Øre',
    'محمد الأحمد',
    '山田 太郎',
    '𝒜𝓁𝒾𝒸ℯ',
    'O\u2019Brien',
    "O'Brien",
    '"quoted"',
    '\\back\\slash',
    '$where',
    'a.b',
    '__proto__',
    '<b>bold</b>',
    '\ud83d',
    'e\u0301',
    '\u00e9',
  ];
  return out.filter((v) => v !== current);
}

/** Phone numbers as people and telephony systems write them. */
const PHONES = [
  '+33 6 12 34 56 78',
  '0033612345678',
  '06.12.34.56.78',
  '06-12-34-56-78',
  '+33 (0)6 12 34 56 78',
  '(06) 12 34 56 78',
  '06 12 34 56 06 ext. 12',
  '+33612345606;ext=12',
  '+33 6 12 34 56 06 x12',
  '+1 202-555-0143',
  '+1 (415) 555-2671',
  '+44 7700 900123',
  '+447700900123',
  '+49 30 901820',
  '+212 6 61 23 45 67',
  '+852 5123 4567',
  '+33 1 23 45 67 89',
  '01 23 45 67 89',
  '+33612345678\u200e',
  '\u202d+33612345678\u202c',
  '+３３６１２３４５６７８',
  '٠٦١٢٣٤٥٦٧٨',
  'tel:+33612345678',
  '+33 6 12 34 56 78 ',
  '+999 123',
];

/** Addresses as partners' forms send them. */
const EMAILS = [
  'Jean.Dupont@Example.COM',
  'jean+resto@example.com',
  'jean@bücher.example',
  'jean@xn--bcher-kva.example',
  'jean@BÜCHER.example',
  'jéan@example.com',
  '"jean dupont"@example.com',
  'jean@example.com.',
  ' jean@example.com',
  'jean@example.com ',
  'jean..dupont@example.com',
  'jean@sub.domain.example.co.uk',
  'j@e.co',
  `${'j'.repeat(64)}@example.com`,
  `jean@${'d'.repeat(63)}.example`,
  'jean@[127.0.0.1]',
  'jean@localhost',
  'JEAN@EXAMPLE.COM',
  'ǆ@example.com',
  'İstanbul@example.com',
  'straße@example.com',
];

const DATE_TIMES = [
  // The autumn change in Paris (25 October 2026): 02:00-03:00 happens twice.
  '2026-10-25T02:30:00+02:00',
  '2026-10-25T02:30:00+01:00',
  '2026-10-24T19:00:00+02:00',
  '2026-10-25T19:00:00+01:00',
  '2026-10-25T19:00:00+02:00',
  '2026-10-26T19:00:00+01:00',
  // The same dinner in other spellings of the instant.
  '2026-06-03T17:00:00Z',
  '2026-06-03T17:00:00.000Z',
  '2026-06-03T22:30:00+05:30',
  '2026-06-03T22:45:00+05:45',
  '2026-06-03T13:30:00-03:30',
  '2026-06-04T07:00:00+14:00',
  '2026-06-03T05:00:00-12:00',
  '2026-06-03T19:00:00.999+02:00',
  '2026-06-03T19:00:00.123456+02:00',
  '2026-06-03t19:00:00+02:00',
  '2026-06-03T17:00:00z',
  '2026-06-03T19:00:00+0200',
  '2026-06-03T19:00+02:00',
  '2026-06-03T19:00:60+02:00',
  '2026-06-03T19:00:00-00:00',
  '2026-06-03 19:00:00+02:00',
  // Past midnight: the late shift's 00:00 belongs to the service day before.
  '2026-06-04T00:00:00+02:00',
  '2026-06-03T23:30:00+02:00',
  // The first and last instants that are still bookable or sensible.
  '2026-06-02T19:00:00+02:00',
  '2027-06-02T19:00:00+02:00',
  '2099-12-31T23:00:00+01:00',
];

function numbersFor(s: JsonSchema | undefined): (number | string)[] {
  const min = num(s?.minimum);
  const max = num(s?.maximum);
  const out: (number | string)[] = [
    0,
    1,
    -1,
    2.5,
    1e21,
    2 ** 31,
    Number.MAX_SAFE_INTEGER,
    '-0',
    '1.0',
    '1e2',
  ];
  if (min !== undefined) out.push(min, min - 1);
  if (max !== undefined) out.push(max, max + 1);
  return out;
}

/** Members a partner's system adds by accident or on purpose: names a store may treat specially. */
const ODD_KEYS = [
  '$set',
  'a.b',
  '$',
  '.',
  '',
  ' ',
  '__proto__',
  'constructor',
  'toString',
  '😀',
  'ключ',
  'x\u0000y',
];
const ODD_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e21,
  '',
  '😀',
  [],
  {},
  { $gt: '' },
  { 'a.b': 1 },
  ['a', 1, null],
  { nested: { deeper: { deepest: [1, { x: 'y' }] } } },
];

/** A JSON text of `value` with a fragment in place of the value at `path`. */
function rawWith(value: unknown, path: string[], fragment: string): string {
  const marker = '\u0000WF\u0000';
  return JSON.stringify(withValue(value, path, marker)).replace(JSON.stringify(marker), fragment);
}

/**
 * One mutation of `base` (valid under `json`): a field's value changed, nulled or removed; an unknown
 * member at the root or in an object; a member repeated; or nothing (the base itself).
 */
export function mutations(base: Record<string, unknown>, json: JsonSchema): fc.Arbitrary<Mutated> {
  const spots = leaves(base);
  const objects = [[], ...spots.filter((l) => isPlainObject(l.value)).map((l) => l.path)] as string[][];
  const keep: fc.Arbitrary<Mutated> = fc.constant({ label: 'as is', sent: { value: base } });
  if (spots.length === 0) return keep;
  const field = fc.constantFrom(...spots).chain((leaf) => {
    const schema = schemasAt(json, leaf.path).find((s) => s.type !== undefined);
    const name = leaf.path.join('.');
    const set = (v: unknown, how = JSON.stringify(v)?.slice(0, 60)): Mutated => ({
      label: `${name} = ${how}`,
      sent: { value: withValue(base, leaf.path, v) },
    });
    const choices: fc.Arbitrary<Mutated>[] = [];
    const v = leaf.value;
    if (typeof v === 'string') {
      const strings = stringsFor(schema, v);
      choices.push(fc.constantFrom(...strings).map((s) => set(s, describe(s))));
      const enums = schemasAt(json, leaf.path).flatMap((x) => (Array.isArray(x.enum) ? x.enum : []));
      if (enums.length) choices.push(fc.constantFrom(...enums).map((e) => set(e)));
      if (/phone/.test(name)) choices.push(fc.constantFrom(...PHONES).map((p) => set(p)));
      if (/email/.test(name)) choices.push(fc.constantFrom(...EMAILS).map((e) => set(e)));
      if (schema?.format === 'date-time' || /_at$/.test(name))
        choices.push(fc.constantFrom(...DATE_TIMES).map((d) => set(d)));
    } else if (typeof v === 'number') {
      choices.push(
        fc
          .constantFrom(...numbersFor(schema))
          .map((n) =>
            typeof n === 'string'
              ? { label: `${name} = ${n}`, sent: { raw: rawWith(base, leaf.path, n) } }
              : set(n),
          ),
      );
    } else if (typeof v === 'boolean') {
      choices.push(fc.constant(set(!v)), fc.constant(set(v ? 'true' : 'false')));
    } else if (Array.isArray(v)) {
      const item = v[0];
      choices.push(
        fc.constant(set([])),
        fc.constant(set([...v, ...v])),
        fc.constant(set(v.slice().reverse())),
        fc.constantFrom(...ODD_VALUES).map((o) => set([...v, o])),
      );
      if (typeof item === 'string') {
        const max = num(schema?.maxItems) ?? 100;
        choices.push(
          fc.constant(
            set(
              Array.from({ length: max }, (_, i) => `${item}${i}`),
              `${max} items`,
            ),
          ),
          fc.constant(
            set(
              Array.from({ length: max + 1 }, (_, i) => `${item}${i}`),
              `${max + 1} items`,
            ),
          ),
          fc
            .constantFrom(...stringsFor(schemasAt(json, [...leaf.path, '0'])[0], item))
            .map((s) => set([s], `[${describe(s)}]`)),
        );
      }
    } else if (isPlainObject(v)) {
      choices.push(
        fc.constant(set({})),
        fc.tuple(fc.constantFrom(...ODD_KEYS), fc.constantFrom(...ODD_VALUES)).map(([k, o]) => ({
          label: `${name}[${JSON.stringify(k)}] = ${JSON.stringify(o)}`,
          sent: { value: withValue(base, [...leaf.path, k], o) },
        })),
      );
    }
    // Null and removal are mostly refused or trivial: a changed value is what reaches the store.
    const gone = fc.constantFrom(set(null), {
      label: `${name} removed`,
      sent: { value: withValue(base, leaf.path, DELETE) },
    });
    return choices.length
      ? fc.oneof({ weight: 1, arbitrary: gone }, { weight: 4, arbitrary: fc.oneof(...choices) })
      : gone;
  });
  const extra = fc
    .tuple(fc.constantFrom(...objects), fc.constantFrom(...ODD_KEYS, 'unknown_field', 'customer_id'))
    .map(([at, k]) => ({
      label: `extra member ${JSON.stringify(k)} at ${at.join('.') || 'root'}`,
      sent: { value: withValue(base, [...at, k], 'extra') },
    }));
  // The same member twice: the JSON text, since no object can hold it.
  const repeated = fc.constantFrom(...spots.filter((l) => l.path.length === 1)).map((leaf) => {
    const text = JSON.stringify(base);
    const k = leaf.path[0] as string;
    return {
      label: `member ${k} repeated`,
      sent: { raw: `${text.slice(0, -1)},${JSON.stringify(k)}:${JSON.stringify(leaf.value)}}` },
    };
  });
  return fc.oneof(
    { weight: 2, arbitrary: keep },
    { weight: 12, arbitrary: field },
    { weight: 1, arbitrary: extra },
    { weight: 1, arbitrary: repeated },
  );
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A short label for a string (long ones by their length and first code point). */
function describe(s: string): string {
  const points = [...s].length;
  return points > 20
    ? `${JSON.stringify([...s].slice(0, 3).join(''))}… (${points} code points)`
    : JSON.stringify(s);
}
