// Right to erasure by crypto-shredding, on a live service: personal fields never reach the log in
// clear, erasure makes them unreadable everywhere (replays included) while the log stays intact, and
// a log written before sealing is migrated at start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerSubject } from '../../src/privacy/seal';
import { runCli as cli, rawDataFiles } from '../helpers/cli-in-process';
import { customerBootstrap, TOKENS } from '../helpers/customer-service';
import { startTestService } from '../helpers/service';

const t = suite('erasure: crypto-shredding of customers');
const dirs: string[] = [];
t.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'couvert-erasure-'));
  dirs.push(d);
  return d;
};

/** Every data column of a stream, as stored. */
function stored(dataDir: string, stream: string): string {
  const db = new Database(join(dataDir, 'events.sqlite'), { readonly: true });
  try {
    return (
      db.prepare('SELECT data FROM events WHERE stream = ? ORDER BY revision').pluck().all(stream) as string[]
    ).join('\n');
  } finally {
    db.close();
  }
}

const PERSONAL = /Lovelace|ada@example\.test|ada\.king@example\.test|612345678|peanuts|Ada L\.|nut-allergy/;

t('personal fields are sealed in the log, readable through the API, and erased for good', async () => {
  const dataDir = freshDir();
  let svc = await startTestService({ bootstrap: customerBootstrap, dataDir });
  let id = '';
  try {
    const made = await svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: {
        name: 'Ada Lovelace',
        email: 'ada@example.test',
        phone_number: '+33612345678',
        note: 'peanuts',
        tags: ['regular', 'nut-allergy'],
        on_match: 'create_new',
      },
    });
    assert.is(made.status, 201, made.text);
    id = made.body.data.id;
    const patched = await svc.api('PATCH', `/customers/${id}`, {
      token: TOKENS.write,
      body: { email: 'ada.king@example.test', name: 'Ada L.' },
    });
    assert.is(patched.status, 200, patched.text);
    const raw = stored(dataDir, `customer-${id}`);
    assert.not.match(raw, PERSONAL, 'nothing personal in clear in the log');
    // A new customer is sealed with a pool key the box names (v2); later events with the same key.
    const boxes = [...raw.matchAll(/"sealed":\{"v":2,"kid":"([\w-]{25}\.\d{1,3})","paths":\[([^\]]*)\]/g)];
    assert.is(boxes.length, 2, raw);
    assert.is(
      boxes[0]![2],
      '"profile.name","profile.email","profile.phone_number","profile.note","profile.tags"',
      'tags are typed about them: sealed too',
    );
    const kid = boxes[0]![1] as string;
    assert.is(boxes[1]![1], kid, 'the update: the same key');
    const read = await svc.api('GET', `/customers/${id}`, { token: TOKENS.read });
    assert.equal(
      [read.body.data.name, read.body.data.email, read.body.data.phone_number, read.body.data.note],
      ['Ada L.', 'ada.king@example.test', '+33612345678', 'peanuts'],
    );
    const before = (await cli(svc, 'audit history', { json: true }, [id])).map((l) => JSON.parse(l));
    assert.ok(
      before[1].changes.some(
        (c: { field: string; from: unknown; to: unknown }) =>
          c.field === 'email' && c.from === 'ada@example.test',
      ),
      'auditors read the history in clear while the key exists',
    );

    const said = await cli(svc, 'audit erase', { customer: id });
    assert.match(said[0]!, new RegExp(`customer ${id} erased: deleted, and its key is destroyed\\.`));
    assert.is((await svc.rt.keys.find(customerSubject(id))).state, 'destroyed');
    assert.is(
      (await svc.rt.keys.find(`key:${kid}`)).state,
      'destroyed',
      'and the pool key it was sealed with',
    );
    assert.is((await svc.api('GET', `/customers/${id}`, { token: TOKENS.read })).status, 404);
    const after = (await cli(svc, 'audit history', { json: true }, [id])).map((l) => JSON.parse(l));
    assert.not.match(JSON.stringify(after), PERSONAL, 'the history no longer holds them');
    assert.ok(
      after[0].changes.some((c: { field: string; to: unknown }) => c.field === 'name' && c.to === '[erased]'),
    );
    assert.ok(
      after[0].changes.some((c: { field: string; to: unknown }) => c.field === 'erased' && c.to === true),
      'and says so',
    );
    assert.is(after.at(-1).type, 'CustomerDeleted');
    const verified = await cli(svc, 'audit verify', { 'no-progress': true });
    assert.match(verified[0]!, /0 problem\(s\)/, 'the log is intact: erasure rewrote nothing');
    assert.match(verified[1]!, /1 deleted customer\(s\); 0 still with a key/);
  } finally {
    await svc.close({ keepData: true });
  }
  // A replay from the log (a restart rebuilds every read model) shows the customer erased.
  svc = await startTestService({ dataDir });
  try {
    const asOf = JSON.parse(
      (await cli(svc, 'audit as-of', { at: String(await svc.rt.events.headPosition()) }, [id])).join('\n'),
    );
    assert.equal(
      [asOf.state.status, asOf.state.profile.name, asOf.state.profile.email],
      ['deleted', '[erased]', null],
    );
    assert.is((await svc.api('GET', `/customers/${id}`, { token: TOKENS.read })).status, 404);
    assert.equal(await cli(svc, 'audit erase', { pending: true }), [
      '1 deleted customer(s) in the log; 0 key(s) destroyed now, the others already were',
    ]);
  } finally {
    await svc.close();
  }
});

t('what an import row typed is not kept in clear by its refusal', async () => {
  // A skipped row's errors are recorded in the import job's stream, which is never sealed nor erased:
  // they must not repeat the row's cells (here a custom field value a manager typed about the guest).
  const dataDir = freshDir();
  const svc = await startTestService({ bootstrap: customerBootstrap, dataDir });
  try {
    const file = join(dataDir, 'guests.csv');
    writeFileSync(file, 'name,email,Diet\nAda Lovelace,ada@example.test,peanuts|vegan\n');
    await cli(svc, 'customers import', { restaurant: 'rest_fr', file });
    rmSync(file);
    const summary = join(dataDir, 'summary.csv');
    const [job] = (await svc.rt.docs.collection('customer_imports').find({})) as { _id: string }[];
    await cli(svc, 'customers import-summary', { job: job?._id as string, out: summary });
    const text = readFileSync(summary, 'utf8');
    rmSync(summary);
    assert.match(text, /skipped,.*custom_fields\.cf_diet/, 'the row is refused, its error named');
    assert.not.match(text, /peanuts/, 'the summary');
    assert.not.match(rawDataFiles(dataDir), /peanuts/, 'the log');
  } finally {
    await svc.close();
  }
});

t('a log written before sealing and the chain is migrated at start, and tested as such', async () => {
  const dataDir = freshDir();
  const svc = await startTestService({ bootstrap: customerBootstrap, dataDir });
  await svc.close({ keepData: true });
  // Turn the log back into what the code before this change wrote: schema 1, no hash, and two
  // customers in clear, one of them deleted.
  const db = new Database(join(dataDir, 'events.sqlite'));
  db.exec('ALTER TABLE events DROP COLUMN hash');
  db.pragma('user_version = 1');
  const insert = db.prepare(
    'INSERT INTO events (id, stream, revision, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const profile = (name: string, email: string) => ({
    name,
    email,
    phone_number: '+33612345678',
    country_code: 'FR',
    lang: 'EN',
    tags: [],
    note: 'peanuts',
    custom_fields: {},
    newsletter_consent: false,
    external_id: null,
  });
  const meta = JSON.stringify({ actor: 'credential:key_write', restaurant_id: 'rest_fr' });
  const at = '2026-01-01T10:00:00.000Z';
  const base = (c: string) => ({ customer_id: c, restaurant_id: 'rest_fr', at });
  const rows: [string, number, string, object][] = [
    [
      'cus_legacy_kept',
      0,
      'CustomerCreated',
      {
        ...base('cus_legacy_kept'),
        profile: profile('Ada Lovelace', 'ada@example.test'),
        draft: false,
        origin: 'API',
      },
    ],
    [
      'cus_legacy_gone',
      0,
      'CustomerCreated',
      {
        ...base('cus_legacy_gone'),
        profile: profile('Ada L.', 'ada.king@example.test'),
        draft: false,
        origin: 'API',
      },
    ],
    ['cus_legacy_gone', 1, 'CustomerDeleted', { ...base('cus_legacy_gone'), reason: 'asked by Lovelace' }],
  ];
  rows.forEach(([c, revision, type, data], i) => {
    insert.run(
      `0190a3c4-0000-7000-8000-0000000000a${i}`,
      `customer-${c}`,
      revision,
      type,
      JSON.stringify(data),
      meta,
      at,
    );
  });
  db.close();

  const again = await startTestService({ dataDir });
  try {
    for (const c of ['cus_legacy_kept', 'cus_legacy_gone'])
      assert.not.match(stored(dataDir, `customer-${c}`), PERSONAL, `${c} is sealed in place`);
    const kept = await again.api('GET', '/customers/cus_legacy_kept', { token: TOKENS.read });
    assert.is(kept.status, 200, kept.text);
    assert.equal([kept.body.data.name, kept.body.data.email], ['Ada Lovelace', 'ada@example.test']);
    assert.is(
      (await again.rt.keys.find(customerSubject('cus_legacy_gone'))).state,
      'destroyed',
      'deleted back then: erased now',
    );
    const gone = JSON.parse(
      (
        await cli(again, 'audit as-of', { at: String(await again.rt.events.headPosition()) }, [
          'cus_legacy_gone',
        ])
      ).join('\n'),
    );
    assert.is(gone.state.profile.name, '[erased]');
    const verified = await cli(again, 'audit verify', { 'no-progress': true });
    assert.match(verified[0]!, /chained and intact, 0 written before the chain; 0 problem\(s\)/);
  } finally {
    await again.close();
  }
});

t.run();
