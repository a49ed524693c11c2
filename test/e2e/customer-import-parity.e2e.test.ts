// Parity of the CSV import with POST /customers, row by row (docs/customer-import.md: "each row is
// checked by the customers module's own rules"): for each case a request body and the CSV row that
// spells the same values. A body the API refuses must be a row the import skips with the same fields
// and codes; a body the API takes must be a row the import creates, stored the same way.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { importRowResults } from '../../commands/customer-import/handler';
import { presentCustomer } from '../../queries/customer-presenter';
import { getCustomer } from '../../queries/customers';
import { operatorMeta } from '../../src/core/command-meta';
import { importCustomers, prepareImport } from '../../src/customer-import/engine';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import type { TestService } from '../helpers/service';

const t = suite<{ svc: TestService }>('customer import: parity with POST /customers');

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({ TEST_CLOCK: 'true' });
});
t.after(async ({ svc }) => svc.close());

const HEADER = [
  'name',
  'email',
  'phone_number',
  'lang',
  'external_id',
  'tags',
  'note',
  'newsletter_consent',
  'cf_text',
  'cf_kids',
  'cf_birthday',
  'cf_terrace',
  'cf_vip',
  'cf_diet',
] as const;
type Cells = Partial<Record<(typeof HEADER)[number], string>>;

const CUSTOM = ['cf_text', 'cf_kids', 'cf_birthday', 'cf_terrace', 'cf_vip', 'cf_diet'] as const;

const asNumber = (s: string) => (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(s) ? Number(s) : s);
const asBoolean = (s: string) => (({ true: true, false: false }) as Record<string, boolean>)[s] ?? s;

/** The body POST /customers receives for the values a row spells (as docs/customer-import.md reads them). */
function bodyOf(cells: Cells): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const given = (k: keyof Cells) => cells[k] !== undefined && cells[k]?.trim() !== '';
  if (given('name')) body.name = cells.name;
  for (const k of ['email', 'phone_number'] as const) if (given(k)) body[k] = cells[k]?.trim();
  if (given('lang')) body.lang = cells.lang?.trim().toUpperCase();
  for (const k of ['external_id', 'note'] as const) if (given(k)) body[k] = cells[k];
  const list = (s: string) =>
    s
      .split('|')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  if (given('tags')) body.tags = list(cells.tags as string);
  if (given('newsletter_consent'))
    body.newsletter_consent = asBoolean(cells.newsletter_consent?.trim() as string);
  const custom: Record<string, unknown> = {};
  if (given('cf_text')) custom.cf_text = cells.cf_text;
  if (given('cf_kids')) custom.cf_kids = asNumber(cells.cf_kids?.trim() as string);
  if (given('cf_birthday')) custom.cf_birthday = cells.cf_birthday?.trim();
  if (given('cf_terrace')) custom.cf_terrace = asBoolean(cells.cf_terrace?.trim() as string);
  if (given('cf_vip')) custom.cf_vip = cells.cf_vip?.trim();
  if (given('cf_diet')) custom.cf_diet = list(cells.cf_diet as string);
  if (Object.keys(custom).length) body.custom_fields = custom;
  return body;
}

/** A CSV record as a partner's file has it: quoted where needed, nothing else added. */
const csvRecord = (cells: readonly string[]) =>
  cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(',');

const long = (n: number) => 'x'.repeat(n);
let n = 0;
const unique = () => `parity${++n}`;

/** [what, the row's cells]; every case is sent alone (create_new: no case matches another). */
const CASES: [string, Cells][] = [
  ['a plain customer', { name: 'Ann', email: 'ann@parity.test', phone_number: '06 12 34 56 78' }],
  [
    'every field',
    {
      name: ' Bob  Jr ',
      email: 'Bob@Parity.test',
      phone_number: '+44 20 7946 0958',
      lang: 'it',
      external_id: ' ext 1 ',
      tags: 'vip|regular|vip',
      note: 'likes =SUM(A1)',
      newsletter_consent: 'true',
      cf_text: '  spaced  ',
      cf_kids: '2',
      cf_birthday: '1990-02-28',
      cf_terrace: 'false',
      cf_vip: 'gold',
      cf_diet: 'vegan|halal',
    },
  ],
  ['a name of an emoji only', { name: '😀' }],
  ['a name of 200 characters', { name: long(200) }],
  ['a name of 201 characters', { name: long(201) }],
  ['no name', { name: '', email: 'noname@parity.test' }],
  ['a bad email', { name: 'C', email: 'not-an-email' }],
  ['an email with a non-ASCII local part', { name: 'C', email: 'jérôme@parity.test' }],
  ['a phone no country reads', { name: 'C', phone_number: '12345' }],
  ['a phone too short', { name: 'C', phone_number: '12' }],
  ['a phone too long', { name: 'C', phone_number: `+33${'1'.repeat(40)}` }],
  ['a phone with an extension', { name: 'C', phone_number: '06 12 34 56 06 ext. 12' }],
  ['an unknown lang', { name: 'C', lang: 'xx' }],
  ['an external_id of 256 characters', { name: 'C', external_id: long(256) }],
  ['a tag of 101 characters', { name: 'C', tags: long(101) }],
  ['101 tags', { name: 'C', tags: Array.from({ length: 101 }, (_, i) => `t${i}`).join('|') }],
  ['a note of 10,001 characters', { name: 'C', note: long(10_001) }],
  ['a TEXT value of 10,001 characters', { name: 'C', cf_text: long(10_001) }],
  ['a NUMBER above its max', { name: 'C', cf_kids: '11' }],
  ['a NUMBER below its min', { name: 'C', cf_kids: '-1' }],
  ['a NUMBER with a fraction', { name: 'C', cf_kids: '2.5' }],
  ['a DATE that does not exist', { name: 'C', cf_birthday: '2026-02-30' }],
  ['a SELECT option it lacks', { name: 'C', cf_vip: 'bronze' }],
  ['a MULTI_SELECT option it lacks', { name: 'C', cf_diet: 'vegan|paleo' }],
  ['a MULTI_SELECT past its max_items', { name: 'C', cf_diet: 'vegan|halal|kosher' }],
  ['a bound and a custom field broken together', { name: long(201), cf_vip: 'bronze' }],
  ['a name of whitespace', { name: '   ', email: 'blank@parity.test' }],
  // Not NUL: a file holding one is refused whole as not UTF-8 text (UTF-16 read as UTF-8 has them).
  ['a name with a control character', { name: 'A\u0007B' }],
  ['an email with spaces around it', { name: 'C', email: '  spaced@parity.test ' }],
  ['an email of 255 characters', { name: 'C', email: `${long(243)}@parity.test` }],
  ['a phone with spaces around it', { name: 'C', phone_number: ' 06 98 76 54 32 ' }],
  ['a lang in lower case', { name: 'C', lang: 'de' }],
  ['a NUMBER with spaces and an exponent', { name: 'C', cf_kids: ' 1e1 ' }],
  ['a NUMBER that is not one', { name: 'C', cf_kids: 'two' }],
  ['a DATE in another format', { name: 'C', cf_birthday: '28/02/1990' }],
  ['a DATE with a time', { name: 'C', cf_birthday: '1990-02-28T10:00:00Z' }],
  ['a BOOLEAN true', { name: 'C', cf_terrace: 'true', newsletter_consent: 'false' }],
  ['a TEXT value of whitespace and text', { name: 'C', cf_text: ' a ' }],
  ['a tag with spaces', { name: 'C', tags: ' a b |c' }],
  ['tags differing in case', { name: 'C', tags: 'VIP|vip|VIP' }],
  ['a MULTI_SELECT option twice', { name: 'C', cf_diet: 'vegan|vegan' }],
  ['a MULTI_SELECT of three, one twice', { name: 'C', cf_diet: 'vegan|halal|vegan' }],
  ['a note with a line break and a formula', { name: 'C', note: '=1+1\r\nsecond line' }],
  ['a DATE of 29 February', { name: 'C', cf_birthday: '2024-02-29' }],
  ['a NUMBER of 0', { name: 'C', cf_kids: '0' }],
  ['an external_id of spaces and text', { name: 'C', external_id: `  ${unique()}` }],
];

const fields = (issues: { path?: string; code?: string }[]) =>
  issues.map((i) => `${i.path} ${i.code}`).sort();

const comparable = (c: ReturnType<typeof presentCustomer>) => {
  const { id: _id, created_at: _c, updated_at: _u, ...rest } = c as Record<string, unknown>;
  return rest;
};

t('each row is refused or taken as POST /customers refuses or takes its body', async ({ svc }) => {
  const rows = CASES.map(([, cells]) => {
    // A key of its own for each case that carries one, so no case matches another.
    const email = cells.email?.includes('@parity.test')
      ? cells.email.replace('@', `+${unique()}@`)
      : cells.email;
    return { ...cells, ...(email !== undefined ? { email } : {}) };
  });
  const api = [];
  for (const cells of rows) {
    const r = await svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: { ...bodyOf(cells), on_match: 'create_new' },
      anyBody: true,
    });
    api.push(r);
  }
  const text = [
    csvRecord(HEADER.map((h) => (h.startsWith('cf_') ? `cf:${h}` : h))),
    ...rows.map((c) => csvRecord(HEADER.map((h) => c[h] ?? ''))),
  ].join('\r\n');
  const prepared = await prepareImport(svc.rt, 'rest_fr', new TextEncoder().encode(`${text}\r\n`));
  const job = await importCustomers(svc.rt, prepared, {
    onMatch: 'create_new',
    fileName: 'parity.csv',
    meta: operatorMeta('test'),
    thread: false,
  });
  assert.is(job.status, 'finished');
  const results = [];
  for await (const r of importRowResults(svc.rt, job.jobId as string)) results.push(r);
  await svc.rt.settle(null);
  const faults: string[] = [];
  for (const [i, [what]] of CASES.entries()) {
    const a = api[i];
    const r = results[i];
    if (!a || !r) throw new Error(`${what}: no answer or no row`);
    if (a.status >= 400) {
      const want = fields(a.body.error.details.issues);
      if (r.outcome !== 'skipped')
        faults.push(`${what}: the API answered ${a.status} ${a.text}, the import ${r.outcome}`);
      // The import names every fault of a row at once (a row is fixed once in the file): the API
      // answers a 400 before looking at the custom fields (422), so its faults are among the row's.
      else if (
        a.status === 422
          ? JSON.stringify(fields(r.errors)) !== JSON.stringify(want)
          : !want.every((w) => fields(r.errors).includes(w)) ||
            fields(r.errors).some((w) => !want.includes(w) && !w.startsWith('custom_fields.'))
      )
        faults.push(`${what}: the API refused ${want.join(', ')}, the import ${fields(r.errors).join(', ')}`);
    } else if (r.outcome !== 'created') {
      faults.push(
        `${what}: the API answered ${a.status}, the import ${r.outcome} ${JSON.stringify(r.errors)}`,
      );
    } else {
      const doc = presentCustomer(await getCustomer(svc.rt.docs, 'rest_fr', r.customer_id as string));
      const [x, y] = [JSON.stringify(comparable(doc)), JSON.stringify(comparable(a.body.data))];
      if (x !== y) faults.push(`${what}: stored ${x} by the import, ${y} by the API`);
    }
  }
  assert.equal(faults, []);
});

/** [what, the row's cells]: each updates a customer of its own, seeded alike for the API and the import. */
const UPDATES: [string, Cells][] = [
  ['the name only', { name: 'New name' }],
  ['tags replace the list', { name: 'Seed', tags: 'b|c' }],
  ['custom fields change only those named', { name: 'Seed', cf_kids: '3', cf_diet: 'kosher' }],
  [
    'contact details',
    { name: 'Seed', email: 'moved@parity.test', phone_number: '07 00 00 00 01', lang: 'es' },
  ],
  ['consent withdrawn and a note', { name: 'Seed', newsletter_consent: 'false', note: 'now' }],
  ['a refused value', { name: 'Seed', cf_vip: 'bronze' }],
  ['nothing that differs', { name: 'Seed', tags: 'a|b' }],
];

t('on_match update: a row writes onto its match what POST /customers writes', async ({ svc }) => {
  const seed = {
    name: 'Seed',
    tags: ['a', 'b'],
    note: 'before',
    newsletter_consent: true,
    custom_fields: { cf_kids: 1, cf_vip: 'gold', cf_diet: ['vegan'] },
  };
  const ids: { api: string; file: string }[] = [];
  for (const [i] of UPDATES.entries()) {
    const made = [];
    for (const side of ['api', 'file']) {
      const r = await svc.api('POST', '/customers', {
        token: TOKENS.write,
        body: { ...seed, external_id: `upd-${side}-${i}`, on_match: 'create_new' },
      });
      assert.is(r.status, 201, r.text);
      made.push(r.body.data.id as string);
    }
    ids.push({ api: made[0] as string, file: made[1] as string });
  }
  const api = [];
  for (const [i, [, cells]] of UPDATES.entries())
    api.push(
      await svc.api('POST', '/customers', {
        token: TOKENS.write,
        body: { ...bodyOf(cells), external_id: `upd-api-${i}`, on_match: 'update' },
        anyBody: true,
      }),
    );
  const header = HEADER.map((h) => (h.startsWith('cf_') ? `cf:${h}` : h));
  const lines = UPDATES.map(([, cells], i) =>
    csvRecord(HEADER.map((h) => (h === 'external_id' ? `upd-file-${i}` : (cells[h] ?? '')))),
  );
  const text = [csvRecord(header), ...lines].join('\r\n');
  const prepared = await prepareImport(svc.rt, 'rest_fr', new TextEncoder().encode(`${text}\r\n`));
  const job = await importCustomers(svc.rt, prepared, {
    onMatch: 'update',
    fileName: 'parity-update.csv',
    meta: operatorMeta('test'),
    thread: false,
  });
  const results = [];
  for await (const r of importRowResults(svc.rt, job.jobId as string)) results.push(r);
  await svc.rt.settle(null);
  const faults: string[] = [];
  for (const [i, [what]] of UPDATES.entries()) {
    const a = api[i];
    const r = results[i];
    const id = ids[i];
    if (!a || !r || !id) throw new Error(`${what}: no answer or no row`);
    if (a.status >= 400) {
      if (r.outcome !== 'skipped')
        faults.push(`${what}: the API answered ${a.status}, the import ${r.outcome}`);
      continue;
    }
    if (r.customer_id !== id.file) faults.push(`${what}: the row matched ${r.customer_id}, not ${id.file}`);
    const strip = (d: ReturnType<typeof presentCustomer>) => {
      const { external_id: _e, ...rest } = comparable(d);
      return JSON.stringify(rest);
    };
    const [x, y] = [
      strip(presentCustomer(await getCustomer(svc.rt.docs, 'rest_fr', id.file))),
      strip(presentCustomer(await getCustomer(svc.rt.docs, 'rest_fr', id.api))),
    ];
    if (x !== y) faults.push(`${what}: the import left ${x}, the API ${y}`);
  }
  assert.equal(faults, []);
});

t.run();
