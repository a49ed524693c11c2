// The rules behind the dashboard's gaps, directly: a credential's use is recorded at most once an hour
// (and "last used" is then never more than an hour behind), a delivery answer's excerpt is bounded,
// visible and never keeps a secret, and one customer import runs at a time per restaurant.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { USAGE_RESOLUTION_MS, usageDue } from '../../commands/credentials/usage';
import {
  decideTakeSlot,
  type HolderJob,
  holderActive,
  holderJobOf,
  STALE_AFTER_MS,
  UNSTARTED_AFTER_MS,
} from '../../commands/customer-import/slot';
import { apiKeysProjection } from '../../projections/api-keys';
import { customerImportsProjection } from '../../projections/customer-imports';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { ApiError } from '../../src/core/errors';
import type { RecordedEvent } from '../../src/ports/event-store';
import { EXCERPT_MAX_CHARS, responseExcerpt } from '../../src/webhooks/excerpt';

const t = suite('dashboard gaps: rules');
const HOUR = USAGE_RESOLUTION_MS;

t('usageDue: the first use, then not before an hour has passed; a clock gone back records again', () => {
  assert.ok(usageDue(null, 0));
  assert.not.ok(usageDue(1000, 1000));
  assert.not.ok(usageDue(1000, 1000 + HOUR - 1));
  assert.ok(usageDue(1000, 1000 + HOUR));
  assert.ok(usageDue(5000, 1000));
});

t('property: uses recorded are an hour apart at least, and every use is within the hour after one', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 3 * HOUR }), { minLength: 1, maxLength: 200 }), (gaps) => {
      let now = 0;
      let last: number | null = null;
      const recorded: number[] = [];
      for (const gap of gaps) {
        now += gap;
        if (usageDue(last, now)) {
          recorded.push(now);
          last = now;
        }
        // "Last used" as shown: the latest recorded use; the real latest use is within the hour after it.
        const shown = recorded.at(-1) as number;
        assert.ok(now >= shown && now - shown < HOUR);
      }
      for (let i = 1; i < recorded.length; i++)
        assert.ok((recorded[i] as number) - (recorded[i - 1] as number) >= HOUR);
    }),
  );
});

const ev = (type: string, data: Record<string, unknown>, position: number): RecordedEvent => ({
  id: `e${position}`,
  type,
  data,
  metadata: {},
  created: '2026-06-01T00:00:00.000Z',
  stream: 's',
  revision: 0,
  position: BigInt(position),
});

t('api_keys: ApiKeyUsed only moves last_used_at forward, and applying it twice changes nothing', async () => {
  const docs = new EmbeddedDocumentStore();
  await apiKeysProjection.setup?.(docs);
  const created = ev(
    'ApiKeyCreated',
    {
      key_id: 'key_a',
      restaurant_id: 'rest_a',
      name: 'A',
      token_hash: 'h',
      token_hint: 'abcd',
      scopes: [],
      type: 'API_KEY',
      application: null,
      at: '2026-06-01T00:00:00.000Z',
    },
    1,
  );
  await apiKeysProjection.apply(created, docs);
  const col = docs.collection('api_keys');
  assert.is((await col.findOne({ _id: 'key_a' }))?.last_used_at, null);
  const later = ev(
    'ApiKeyUsed',
    { key_id: 'key_a', restaurant_id: 'rest_a', at: '2026-06-01T12:00:00.000Z' },
    3,
  );
  const earlier = ev(
    'ApiKeyUsed',
    { key_id: 'key_a', restaurant_id: 'rest_a', at: '2026-06-01T10:00:00.000Z' },
    2,
  );
  await apiKeysProjection.apply(later, docs);
  await apiKeysProjection.apply(earlier, docs);
  await apiKeysProjection.apply(later, docs);
  assert.is((await col.findOne({ _id: 'key_a' }))?.last_used_at, '2026-06-01T12:00:00.000Z');
  // A use of a key the read model does not hold creates nothing.
  await apiKeysProjection.apply(ev('ApiKeyUsed', { key_id: 'key_zz', restaurant_id: 'r', at: 'x' }, 4), docs);
  assert.is(await col.findOne({ _id: 'key_zz' }), null);
  await docs.close();
});

t('excerpt: at most 512 code points, controls visible, line feeds and tabs kept', () => {
  assert.is(responseExcerpt(null), null);
  assert.is(responseExcerpt(Buffer.alloc(0)), null);
  assert.equal(responseExcerpt('ok'), { text: 'ok', truncated: false });
  const controls = responseExcerpt('a\r\nb\u0000\u001b[31m\u007f\u0085\u202Eevil\tz');
  assert.is(controls?.text, 'a\u240d\nb\u2400\u241b[31m\u2421\\u{85}\\u{202E}evil\tz');
  const emoji = '😀'.repeat(600);
  const cut = responseExcerpt(emoji);
  assert.is([...(cut?.text ?? '')].length, EXCERPT_MAX_CHARS);
  assert.ok(cut?.truncated);
  // Invalid UTF-8 reads as U+FFFD.
  assert.is(responseExcerpt(Buffer.from([0x61, 0xff, 0x62]))?.text, 'a\ufffdb');
  // Already cut by the reader: said so even when short.
  assert.ok(responseExcerpt('short', [], true)?.truncated);
});

t('excerpt: an echoed secret or signature is redacted, even where the cut would fall inside it', () => {
  const secret = 'whsec_0123456789abcdefghijklmnop';
  const signature = 'a'.repeat(64);
  const body = `${'x'.repeat(500)}${secret} v1=${signature}`;
  const e = responseExcerpt(body, [secret, signature]);
  assert.not.ok(e?.text.includes('whsec_0123'));
  assert.ok(e?.text.endsWith('[redacted]'.slice(0, 12)) || e?.text.includes('[redac'));
  assert.not.ok(responseExcerpt(`sig=${signature}`, [signature])?.text.includes(signature));
});

t('property: the excerpt is bounded, holds no C0/C1 control but \\n and \\t, and never a secret', () => {
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 2000 }),
      fc.string({ minLength: 8, maxLength: 40, unit: 'grapheme-ascii' }),
      (body, secret) => {
        const e = responseExcerpt(`${body}${secret}${body}`, [secret]);
        if (!e) return;
        assert.ok([...e.text].length <= EXCERPT_MAX_CHARS);
        for (const ch of e.text) {
          const cp = ch.codePointAt(0) as number;
          const hidden =
            (cp < 0x20 && cp !== 0x0a && cp !== 0x09) ||
            (cp >= 0x7f && cp <= 0x9f) ||
            (cp >= 0x202a && cp <= 0x202e) ||
            (cp >= 0x2066 && cp <= 0x2069);
          assert.not.ok(hidden, `U+${cp.toString(16)} is shown as is`);
        }
        assert.not.ok(e.text.includes(secret));
      },
    ),
    { numRuns: 300 },
  );
});

const NOW = new Date('2026-06-01T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms).toISOString();
const job = (o: Partial<HolderJob>): HolderJob => ({
  status: 'running',
  lastAt: ago(1000),
  fileName: 'a.csv',
  actor: 'user:usr_1',
  processed: 10,
  rowCount: 100,
  ...o,
});

t(
  'import slot: free, held by a running job (409), released by its end, its silence or a failed start',
  () => {
    const cmd = { jobId: 'imp_b', restaurantId: 'rest_a' };
    assert.is(decideTakeSlot(null, null, cmd, NOW)[0]?.type, 'CustomerImportSlotTaken');
    const holder = { jobId: 'imp_a', takenAt: ago(60_000) };
    try {
      decideTakeSlot(holder, job({}), cmd, NOW);
      assert.unreachable('a running import holds the slot');
    } catch (err) {
      assert.instance(err, ApiError);
      assert.is((err as ApiError).status, 409);
      assert.is((err as ApiError).details?.reason, 'IMPORT_RUNNING');
      assert.match((err as ApiError).message, /a\.csv, 10 of 100 rows/);
    }
    assert.is(decideTakeSlot(holder, job({ status: 'finished' }), cmd, NOW).length, 1);
    assert.is(decideTakeSlot(holder, job({ status: 'failed' }), cmd, NOW).length, 1);
    assert.is(decideTakeSlot(holder, job({ lastAt: ago(STALE_AFTER_MS) }), cmd, NOW).length, 1);
    assert.ok(holderActive(holder, job({ status: 'none', lastAt: null }), NOW.getTime()));
    const old = { jobId: 'imp_a', takenAt: ago(UNSTARTED_AFTER_MS) };
    assert.not.ok(holderActive(old, job({ status: 'none', lastAt: null }), NOW.getTime()));
    // The holder itself: nothing to append.
    assert.equal(decideTakeSlot({ jobId: 'imp_b', takenAt: ago(1) }, null, cmd, NOW), []);
  },
);

t("import slot: the holder's rows done as its stream says, a resumed job's too (not 0)", () => {
  const started = {
    type: 'CustomerImportStarted',
    data: { at: ago(5000), file_name: 'a.csv', actor: 'user:usr_1', row_count: 100_000 },
  };
  const recorded = { type: 'CustomerImportRowsRecorded', data: { at: ago(3000), processed: 500 } };
  const resumed = { type: 'CustomerImportResumed', data: { at: ago(1000), from_row: 20_523 } };
  assert.equal(holderJobOf(undefined, undefined).status, 'none');
  assert.equal(holderJobOf(started, started), {
    status: 'running',
    lastAt: ago(5000),
    fileName: 'a.csv',
    actor: 'user:usr_1',
    processed: 0,
    rowCount: 100_000,
  });
  assert.is(holderJobOf(started, recorded).processed, 500);
  // Resumed, nothing recorded since: the rows before the one it resumed from are done.
  const h = holderJobOf(started, resumed);
  assert.is(h.processed, 20_522);
  assert.is(h.status, 'running');
  assert.is(h.lastAt, ago(1000));
  try {
    decideTakeSlot(
      { jobId: 'imp_a', takenAt: ago(1000) },
      h,
      { jobId: 'imp_b', restaurantId: 'rest_a' },
      NOW,
    );
    assert.unreachable('the resumed job holds the slot');
  } catch (err) {
    assert.match((err as ApiError).message, /\(a\.csv, 20,522 of 100,000 rows done\)/);
  }
  assert.is(
    holderJobOf(started, { type: 'CustomerImportFailed', data: { at: ago(1), processed: 7 } }).status,
    'failed',
  );
});

t(
  'customer_imports: file, who, counts and status; a record applied again or late changes nothing',
  async () => {
    const docs = new EmbeddedDocumentStore();
    await customerImportsProjection.setup?.(docs);
    const base = { job_id: 'imp_1', restaurant_id: 'rest_a' };
    const started = ev(
      'CustomerImportStarted',
      {
        ...base,
        at: '2026-06-01T10:00:00.000Z',
        file_name: 'c.csv',
        file_sha256: 'x',
        row_count: 4,
        on_match: 'update',
        columns: ['name'],
        actor: 'user:usr_1',
      },
      1,
    );
    const counts1 = { created: 1, updated: 0, matched: 0, skipped: 1 };
    const counts2 = { created: 2, updated: 1, matched: 0, skipped: 1 };
    const rec1 = ev(
      'CustomerImportRowsRecorded',
      { ...base, at: '2026-06-01T10:00:01.000Z', processed: 2, counts: counts1 },
      2,
    );
    const rec2 = ev(
      'CustomerImportRowsRecorded',
      { ...base, at: '2026-06-01T10:00:02.000Z', processed: 4, counts: counts2 },
      3,
    );
    const done = ev(
      'CustomerImportFinished',
      { ...base, at: '2026-06-01T10:00:03.000Z', counts: counts2 },
      4,
    );
    for (const e of [started, rec1, rec2, rec1, done, started])
      await customerImportsProjection.apply(e, docs);
    const doc = await docs.collection('customer_imports').findOne({ _id: 'imp_1' });
    assert.is(doc?.status, 'finished');
    assert.is(doc?.file_name, 'c.csv');
    assert.is(doc?.actor, 'user:usr_1');
    assert.is(doc?.processed, 4);
    assert.equal(doc?.counts, counts2);
    assert.is(doc?.ended_at, '2026-06-01T10:00:03.000Z');
    await docs.close();
  },
);

t.run();
