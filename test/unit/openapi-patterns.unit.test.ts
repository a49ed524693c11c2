// Every `pattern` of the served OpenAPI document means the same to the regex engines partners' generated
// validators compile it with: JS without the u flag (OpenAPI 3.0.3 says ECMA-262 5.1, which has none)
// and with it, Python's re, Java's java.util.regex (when `java` is on PATH; said when skipped), and RE2
// (Go), whose missing constructs are read from the pattern. A pattern
// that differs makes a partner's client refuse valid input, or crash on the document.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateOpenApi } from '../../src/http/openapi';
import { partnerRoutes } from '../../src/http/routes/index';
import {
  isFinalNewlineLeniency,
  javaAvailable,
  javaVerdicts,
  jsVerdicts,
  pythonVerdicts,
  unportableConstructs,
} from '../helpers/regex-portability';

const t = suite('openapi patterns');
const JAVA = javaAvailable();
if (!JAVA) console.log('SKIP the Java verdicts of the OpenAPI patterns: no `java` on PATH');
const doc = generateOpenApi(partnerRoutes(), 'http://127.0.0.1');

/** Each pattern of the document, with the JSON pointer of its first use. */
function patternsOf(root: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (v: unknown, at: string) => {
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, `${at}/${i}`);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        if (k === 'pattern' && typeof x === 'string' && !found.has(x)) found.set(x, at);
        walk(x, `${at}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      }
  };
  walk(root, '');
  return found;
}

const BMP: string[] = [];
for (let c = 0; c <= 0xffff; c++) if (c < 0xd800 || c > 0xdfff) BMP.push(String.fromCharCode(c));

const CURATED = [
  '',
  'MC',
  'pM{}',
  'Zoé',
  'e\u0301',
  '\u0301',
  '\u200b\u200b',
  ' \u00a0\u3000',
  '\ud800',
  'a\udfff',
  '😀',
  '\u{e0020}\u{e0041}',
  '\u{e0100}',
  '\u{1d173}',
  '\u{f0000}',
  '\u{10ffff}',
  '\u{11000}',
  '12:30',
  '23:59',
  '24:00',
  '1\u0663:30',
  '\u0661\u0662:\u0663\u0664',
  '12:30\n',
  'a@b.fr',
  'a@b.fr\n',
  'jean+resto@example.com',
  'jean resto@example.com',
  '\u00a0447700900123',
  ' 447700900123',
  '+447700900123',
  '\u1680+33',
  '\ufeff+33',
  '\x1c+33',
  '\x85+33',
  'PENDING,CONFIRMED',
  'PENDING,confirmed',
  'PENDING\n',
  'https://hooks.example.com/x?y=1',
  'https://hooks.example.com/x y',
  'https://hooks.example.com/\n',
  'Bearer abc',
  'Bearer realm="Couvert Partner API"',
  'Bearer realm="Couvert Partner API", error="invalid_token"',
  'req_0123456789',
  'req_0123456789\n',
  'x-1.2:3',
  'abc\tdef',
  'a\nb',
  '\n',
  '\r\n',
];

/** Random text from the characters where engines part: whitespace, marks, controls, digits, planes. */
const RANDOM = fc.sample(
  fc.string({
    unit: fc.oneof(
      fc.constantFrom(
        ...'aZp9:,@.-_ \t\n\r\x00\x1c\x85\xa0\xad\u0301\u0663\u1680\u200b\u2028\u3000\u3164\ufeff',
      ),
      fc.constantFrom('😀', '\u{e0020}', '\u{1d173}', '\u{e0100}', '\ud800'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    maxLength: 12,
  }),
  { seed: 20261128, numRuns: 400 },
);

const SAMPLES = [...BMP, ...CURATED, ...RANDOM];

/** Where the engines part on `patterns`, one line each (at most a few per pattern). */
function differences(patterns: Map<string, string>): string[] {
  const list = [...patterns.keys()];
  const python = pythonVerdicts(list, SAMPLES);
  const java = JAVA ? javaVerdicts(list, SAMPLES) : null;
  const out: string[] = [];
  list.forEach((p, k) => {
    const where = `${patterns.get(p)} ${JSON.stringify(p).slice(0, 80)}`;
    const noU = jsVerdicts(p, '', SAMPLES);
    const u = jsVerdicts(p, 'u', SAMPLES);
    const py = python[k] as string | { error: string };
    // Without java, Python's verdicts stand in for its column (so it adds no difference).
    const jv = java ? (java[k] as string | { error: string }) : py;
    const errors = [
      typeof noU === 'string' ? '' : `JS: ${noU.error}`,
      typeof u === 'string' ? '' : `JS u: ${u.error}`,
      typeof py === 'string' ? '' : `Python: ${py.error}`,
      typeof jv === 'string' || !java ? '' : `Java: ${jv.error}`,
    ].filter(Boolean);
    if (
      errors.length ||
      typeof noU !== 'string' ||
      typeof u !== 'string' ||
      typeof py !== 'string' ||
      typeof jv !== 'string'
    ) {
      out.push(`${where}: does not compile (${errors.join('; ')})`);
      return;
    }
    const js = new RegExp(p);
    let shown = 0;
    const lenient = (i: number, verdicts: string, engine: 'python' | 'java') =>
      verdicts[i] === '1' && isFinalNewlineLeniency(p, SAMPLES[i] as string, (x) => js.test(x), engine);
    SAMPLES.forEach((s, i) => {
      if (noU[i] !== u[i]) {
        // JS with and without u apart: always a difference.
      } else if ((py[i] === u[i] || lenient(i, py, 'python')) && (jv[i] === u[i] || lenient(i, jv, 'java')))
        return;
      if (shown++ < 3)
        out.push(
          `${where} on ${JSON.stringify(s)}: JS ${noU[i]}, JS u ${u[i]}, Python ${py[i]}${java ? `, Java ${jv[i]}` : ''}`,
        );
    });
    if (shown > 3) out.push(`${where}: and ${shown - 3} more samples`);
  });
  return out;
}

t(
  'every pattern of the document compiles and gives one verdict under JS, JS with u, Python re and Java',
  () => {
    const patterns = patternsOf(doc);
    assert.ok(patterns.size >= 8, `only ${patterns.size} patterns found`);
    const found = differences(patterns);
    assert.equal(found, [], found.join('\n'));
    // The difference let through is the document's to state.
    const { description } = (doc as { info: { description: string } }).info;
    assert.match(description, '`$` also matches before a final line feed');
  },
);

t('no pattern uses a construct RE2 lacks (lookaround, backreference) or that engines read apart', () => {
  const found = [...patternsOf(doc)].flatMap(([p, at]) =>
    unportableConstructs(p).map((what) => `${at} ${JSON.stringify(p).slice(0, 80)}: ${what}`),
  );
  assert.equal(found, [], found.join('\n'));
});

t('the checks are not vacuous: what each engine reads apart is found', () => {
  const flagged = (p: string) => unportableConstructs(p).join('; ');
  assert.match(flagged('^(?=a)b'), 'lookaround');
  assert.match(flagged('^(?<!a)b'), 'lookaround');
  assert.match(flagged('^(a)\\1$'), 'backreference');
  assert.match(flagged('[^\\p{M}]'), '\\p');
  assert.match(flagged('^\\d$'), '\\d');
  assert.match(flagged('^\\u00e9$'), '\\u');
  assert.match(flagged('^\\v$'), '\\v');
  assert.match(flagged('^(?<year>[0-9])$'), 'named groups');
  assert.equal(unportableConstructs('^[A-Za-z0-9._:-]{8,128}$'), []);
  const found = differences(
    new Map([
      ['[^\\p{M}\\p{C}\\p{Z}]', 'the not-blank rule by Unicode property'],
      ['^([01]\\d|2[0-3]):[0-5]\\d$', 'digits by \\d'],
      ['^\\S', 'no leading white space by \\S'],
      ['^[a-z]+$', 'an anchored class'],
    ]),
  ).join('\n');
  assert.match(found, /Unicode property .*: does not compile \(Python: error: bad escape \\p/);
  assert.match(found, 'on "1٣:30": JS 0, JS u 0, Python 1');
  assert.match(found, /white space by \\S .* on "\\u001c": JS 1, JS u 1, Python 0/);
  // Python's $ before a final line feed is the one difference let through (isFinalNewlineLeniency).
  assert.not.match(found, 'anchored class');
  if (JAVA) {
    // Java reads \v as any vertical white space, the others as U+000B alone.
    const javaFound = differences(new Map([['^\\v$', 'vertical tab by \\v']])).join('\n');
    assert.match(javaFound, /vertical tab .* on "\\n": JS 0, JS u 0, Python 0, Java 1/);
  }
});

t.run();
