// The customer import page after the review: a failed job says what happened in words (its detail in
// the server log and, scrubbed, in the job for operators); the uploads held for preview share one
// memory budget (IMPORT_UPLOADS_MAX_BYTES); the preview's outcomes are always those of the on_match
// the import will use (headless Chromium, no JavaScript); the job page's "stopped" rule reads the
// job's own stream; a duplicate column is refused with one message. Screenshots of the changed pages
// at desktop and phone widths go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { applyCatalog, loadCatalog } from '../../commands/catalog/handler';
import { recordImportRows, startImportJob } from '../../commands/customer-import/handler';
import { takeImportSlot } from '../../commands/customer-import/slot';
import { CUSTOMER_IMPORTS, type CustomerImportDoc } from '../../projections/customer-imports';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { browserAvailable, clickToLoad, HANG_MS, launchChromium, titleOnceLoaded } from '../helpers/browser';
import { runCli } from '../helpers/cli-in-process';
import { Browser, formFields, oauthBootstrap, PASSWORD, pageText, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('dashboard import review');
/** The budget of the uploads held for preview in this suite (bytes of files). */
const BUDGET = 2048;
const FRONT = 'couvert_pk_front_desk_review_0123456789abcdefgh';

interface Ctx {
  svc: TestService;
  logged: string[];
  manager: Browser;
  solo: Browser;
  third: Browser;
  failedJob: string;
}
const t = suite<Ctx>('dashboard import: review fixes', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
    users: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    customer_matching: true,
    customer_fields: [{ id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] }],
    api_keys: [
      { id: 'key_front', name: 'Front', token: FRONT, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
    ],
  });
  bootstrap.users.push({
    email: 'third@demo.test',
    password: PASSWORD,
    restaurants: [{ id: 'rest_demo', manage_integrations: true }],
  });
  ctx.logged = [];
  ctx.svc = await startTestService({
    bootstrap,
    env: { TEST_CLOCK: 'true', IMPORT_UPLOADS_MAX_BYTES: String(BUDGET) },
    logger: createLogger('info', { write: (line: string) => ctx.logged.push(line) }),
  });
  for (const [who, email] of [
    ['manager', 'manager@demo.test'],
    ['solo', 'solo@demo.test'],
    ['third', 'third@demo.test'],
  ] as const) {
    const b = new Browser(ctx.svc.url);
    const first = await b.get('/dashboard/import?restaurant=rest_demo');
    assert.is((await signIn(b, await b.get(first.location as string), email)).status, 303);
    ctx[who] = b;
  }
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const text = pageText;
const alertOf = (html: string) =>
  text(/<div class="alert" role="alert">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '');

async function upload(b: Browser, csv: string, name = 'guests.csv', onMatch?: string) {
  const page = await b.get('/dashboard/import?restaurant=rest_demo');
  const form = new FormData();
  for (const [k, v] of Object.entries(formFields(page.text, '/dashboard/import/upload'))) form.append(k, v);
  if (onMatch) form.append('on_match', onMatch);
  form.append('file', new Blob([csv], { type: 'text/csv' }), name);
  const res = await b.postMultipart('/dashboard/import/upload', form);
  // 303 (Post/Redirect/Get) to the preview, or to the import page saying why the file was refused.
  return { status: res.status, html: (await b.followed(res)).text };
}

/** Polls until `check` answers; fails after `ms`, a hang bound (an import on a loaded machine is slow). */
async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, ms = HANG_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A CSV of `n` customers whose file is about `bytes` long (a note pads each row). */
function csvOf(tag: string, n: number, bytes: number): string {
  const pad = Math.max(1, Math.floor((bytes - 20) / n) - 40);
  const rows = Array.from({ length: n }, (_, i) => `${tag} ${i},${tag}-${i}@example.test,${'x'.repeat(pad)}`);
  return ['name,email,note', ...rows].join('\n');
}

t('a failed import says what happened in words; its detail goes to the log, scrubbed', async (ctx) => {
  const { svc, manager } = ctx;
  const secretEmail = 'jeanne.secret@example.test';
  const preview = await upload(manager, `name,email\nJeanne Secret,${secretEmail}\nPaul,paul@example.test\n`);
  assert.is(preview.status, 303, preview.html.slice(0, 500));
  // The log's disk fails under the customers' writes (the job's own stream still takes its events).
  const events = svc.rt.events as unknown as {
    append: (stream: string, ...rest: unknown[]) => Promise<unknown>;
  };
  const append = events.append;
  events.append = function (this: unknown, stream: string, ...rest: unknown[]) {
    if (stream.startsWith('customer-') && !stream.startsWith('customer-import'))
      return Promise.reject(
        new Error(
          `SQLITE_IOERR: disk I/O error in /srv/couvert/data/events.sqlite writing "${secretEmail}" for +33612345678`,
        ),
      );
    return append.call(this, stream, ...rest);
  };
  let location: string;
  try {
    const start = await manager.post(
      '/dashboard/import/start',
      formFields(preview.html, '/dashboard/import/start'),
    );
    assert.is(start.status, 303, start.text.slice(0, 400));
    location = start.location as string;
    await until('the import to stop', async () => {
      const p = await manager.get(location);
      return p.text.includes('<title>Import stopped') && p;
    });
  } finally {
    events.append = append;
  }
  const jobId = location.split('/jobs/')[1]?.split('?')[0] as string;
  ctx.failedJob = jobId;
  const page = await manager.get(location);
  const alert = alertOf(page.text);
  // What happened and what to do, with the id to quote; none of the exception's words.
  assert.match(alert, /could not finish this import because of a problem on our side/);
  assert.match(alert, /No row was imported\. To import the file, choose it again below\./);
  assert.match(alert, new RegExp(`quote the import id ${jobId}`));
  for (const leak of ['SQLITE', 'disk I/O', '/srv/couvert', secretEmail, '+33612345678'])
    assert.not.ok(page.text.includes(leak), `the page shows "${leak}"`);
  // The server log has the detail (error class, code, scrubbed message, where), no personal data.
  const line = ctx.logged.find((l) => l.includes('customer import failed') && l.includes(jobId));
  assert.ok(line, `a log line for ${jobId}: ${ctx.logged.join('\n').slice(-2000)}`);
  assert.match(line as string, /SQLITE_IOERR: disk I\/O error/);
  assert.match(line as string, /"restaurant_id":"rest_demo"/);
  assert.not.ok((line as string).includes(secretEmail), 'no email in the log');
  assert.not.ok((line as string).includes('33612345678'), 'no phone number in the log');
  // Operators read the stored reason (CLI import-status): useful, and as scrubbed as the log.
  const status = await runCli(svc, 'customers import-status', { job: jobId });
  const failure = status.find((l) => l.startsWith('failure: ')) ?? '';
  assert.match(failure, /internal error \(Error\) after row 0: SQLITE_IOERR: disk I\/O error/);
  assert.match(failure, /server log/);
  assert.not.ok(failure.includes(secretEmail));
  assert.not.ok(failure.includes('33612345678'));
});

t(
  'the uploads held for preview share one budget: the oldest goes first, a running import stays',
  async (ctx) => {
    const { svc, manager, solo, third } = ctx;
    // Two previews fill most of the budget; a running import's file is not a preview and is never let go.
    const running = await upload(third, csvOf('Running', 12, 900), 'running.csv');
    assert.is(running.status, 303, running.html.slice(0, 400));
    const start = await third.post(
      '/dashboard/import/start',
      formFields(running.html, '/dashboard/import/start'),
    );
    assert.is(start.status, 303);
    const first = await upload(manager, csvOf('First', 5, 800), 'first.csv');
    assert.is(first.status, 303, first.html.slice(0, 400));
    const second = await upload(solo, csvOf('Second', 5, 800), 'second.csv');
    assert.is(second.status, 303);
    // A third preview does not fit beside them: the oldest (the manager's) is let go to make room.
    const newer = await upload(third, csvOf('Third', 5, 800), 'third.csv');
    assert.is(newer.status, 303);
    const gone = await manager.post(
      '/dashboard/import/start',
      formFields(first.html, '/dashboard/import/start'),
    );
    assert.is(gone.status, 400);
    assert.match(alertOf(gone.text), /let go to make room for newer uploads/);
    assert.match(alertOf(gone.text), /Upload the file again/);
    // The running import lost nothing.
    const done = await until('the running import', async () => {
      const p = await third.get(start.location as string);
      return p.text.includes('Import finished') && p;
    });
    assert.match(text(done.text), /12 of 12 rows/);
    assert.match(text(done.text), /Created 12/);
    // The newer previews are still there and import.
    const ok = await solo.post('/dashboard/import/start', formFields(second.html, '/dashboard/import/start'));
    assert.is(ok.status, 303, ok.text.slice(0, 400));
    await until('the second import', async () =>
      (await solo.get(ok.location as string)).text.includes('Import finished'),
    );
    // A file larger than the whole budget is refused with a clear sentence (and nothing is let go).
    const huge = await upload(manager, csvOf('Huge', 10, BUDGET + 500), 'huge.csv');
    assert.is(huge.status, 303, huge.html.slice(0, 400));
    assert.match(alertOf(huge.html), /larger than this server keeps for previews \(2 KB\)/);
    const still = await third.post(
      '/dashboard/import/start',
      formFields(newer.html, '/dashboard/import/start'),
    );
    assert.is(still.status, 303);
    await until('the third import', async () =>
      (await third.get(still.location as string)).text.includes('Import finished'),
    );
    void svc;
  },
);

t("the job page's stopped rule reads the job's own stream, not the read model", async (ctx) => {
  const { svc, manager } = ctx;
  const meta = { actor: 'operator:cli', restaurant_id: 'rest_demo' };
  const jobId = 'imp_streamtime';
  await takeImportSlot(svc.rt, { jobId, restaurantId: 'rest_demo' }, meta);
  const { job } = await startImportJob(
    svc.rt,
    {
      jobId,
      restaurantId: 'rest_demo',
      fileName: 'slow.csv',
      fileSha256: 'a'.repeat(64),
      rowCount: 10,
      onMatch: 'return_existing',
      columns: ['name'],
      actor: 'operator:cli',
    },
    meta,
  );
  const advance = (seconds: number) =>
    svc.api('POST', '/__test/clock', { body: { advance_seconds: seconds } });
  await advance(9 * 60);
  const rows = [1, 2, 3].map((row) => ({
    row,
    outcome: 'created' as const,
    customer_id: null,
    matched_on: null,
    errors: [],
  }));
  const recorded = await recordImportRows(svc.rt, jobId, job, rows, meta);
  const recordedAt = (await svc.rt.events.readStream(`customer-import-${jobId}`)).at(-1)?.data.at as string;
  await svc.rt.settle(recorded.position);
  // The read model has not taken the record in yet (a projector behind, scaled out): it still says
  // the job's last event is its start.
  const col = svc.rt.projections.docs.collection<CustomerImportDoc>(CUSTOMER_IMPORTS);
  const doc = (await col.findOne({ _id: jobId })) as CustomerImportDoc;
  await col.replaceOne({ _id: jobId }, { ...doc, processed: 0, last_event_at: doc.started_at });
  await advance(3 * 60);
  // Twelve minutes after its start, three after its last record: still importing, as its stream says.
  const page = await manager.get(`/dashboard/import/jobs/${jobId}?restaurant=rest_demo`);
  assert.match(page.text, /<title>Importing…/);
  assert.match(page.text, /http-equiv="refresh"/);
  assert.match(text(page.text), /3 of 10 rows/);
  // Eleven minutes after the record: stopped since the record's time (the stream's), not the start.
  await advance(8 * 60);
  const stopped = await manager.get(`/dashboard/import/jobs/${jobId}?restaurant=rest_demo`);
  assert.match(stopped.text, /<title>Import stopped/);
  const since = new Intl.DateTimeFormat('en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'Europe/Paris',
  }).format(new Date(recordedAt));
  const started = new Intl.DateTimeFormat('en-GB', {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: 'Europe/Paris',
  }).format(new Date(doc.started_at as string));
  assert.is.not(since, started);
  assert.match(text(stopped.text), new RegExp(`nothing has been recorded since ${since}`));
});

t('a duplicate column, custom field or not, is refused with one message naming both columns', async (ctx) => {
  const cases: [string, string][] = [
    ['name,VIP level,cf:cf_vip', '"cf:cf_vip" is the same column as column 2 ("VIP level")'],
    ['name,cf:cf_vip,CF:cf_vip', '"CF:cf_vip" is the same column as column 2 ("cf:cf_vip")'],
    ['name,email,Email', '"Email" is the same column as column 2 ("email")'],
  ];
  for (const [header, message] of cases) {
    const res = await upload(ctx.manager, `${header}\nAda,gold,x\n`);
    assert.is(res.status, 303, res.html.slice(0, 300));
    const alert = alertOf(res.html);
    assert.ok(alert.includes(message), alert);
    assert.is(alert.split('same column').length - 1, 1, `said once: ${alert}`);
  }
});

t('Import after the custom fields changed: the rows are checked by the fields defined then', async (ctx) => {
  const { svc, manager } = ctx;
  const meta = operatorMeta('test');
  const before = (await loadCatalog(svc.rt, 'rest_demo')).customer_fields;
  const preview = await upload(manager, 'name,email,VIP level\nVera Gone,vera.gone@example.test,gold\n');
  assert.ok(preview.html.includes('/dashboard/import/start'), preview.html.slice(0, 300));
  // The field is removed while the preview waits for its Import.
  await applyCatalog(svc.rt, 'rest_demo', { customer_fields: [] }, meta, 'replace');
  try {
    // The preview, shown again, says so too: it shows what Import would do now.
    const uploadId = formFields(preview.html, '/dashboard/import/start').upload_id as string;
    const again = await manager.get(`/dashboard/import/uploads/${uploadId}?restaurant=rest_demo`);
    assert.is(again.status, 409, again.text.slice(0, 300));
    assert.ok(alertOf(again.text).includes('The customer fields changed since this file was uploaded'));
    const start = await manager.post(
      '/dashboard/import/start',
      formFields(preview.html, '/dashboard/import/start'),
    );
    assert.is(start.status, 409, start.text.slice(0, 300));
    const alert = alertOf(start.text);
    assert.ok(alert.includes('The customer fields changed since this file was uploaded'), alert);
    assert.ok(
      alert.includes('now: the header row cannot be imported: "VIP level" is not a customer field'),
      alert,
    );
    const found = await svc.api('GET', '/customers?email=vera.gone@example.test', { token: FRONT });
    assert.equal(found.body.data, []);
  } finally {
    await applyCatalog(svc.rt, 'rest_demo', { customer_fields: before }, meta, 'replace');
  }
});

const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-import-review-'));
async function shoot(page: Page, name: string) {
  await page.screenshot({ path: join(shots, `dashboard-${name}-desktop.png`), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(shots, `dashboard-${name}-phone.png`), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

(haveBrowser ? t : t.skip)(
  'the preview shows what Import will do: changing on_match previews again (no JavaScript)',
  async (ctx) => {
    const { svc } = ctx;
    // A customer already there, matched by email.
    const made = await svc.api('POST', '/customers', {
      token: FRONT,
      body: { name: 'Marie Curie', email: 'marie@example.test' },
    });
    assert.is(made.status, 201, made.text);
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({
        viewport: { width: 1280, height: 800 },
        javaScriptEnabled: false,
      });
      const page = await context.newPage();
      await page.goto(`${svc.url}/dashboard/import?restaurant=rest_demo`);
      await page.getByLabel('Email').fill('solo@demo.test');
      await page.getByLabel('Password').fill(PASSWORD);
      await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
      const csv =
        'name,email,note\nMarie Curie,marie@example.test,two prizes\nPierre Curie,pierre@example.test,\n';
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'curie.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
      assert.is(await page.title(), 'Check the file · Le Demo · Couvert');
      // Post/Redirect/Get: the preview is a page of its own, reloaded without sending the file again.
      assert.match(page.url(), /\/dashboard\/import\/uploads\/[\w-]+\?restaurant=rest_demo$/);
      await page.reload();
      assert.is(await page.title(), 'Check the file · Le Demo · Couvert');
      const table = page.locator('table.preview');
      assert.match(
        await table.innerText(),
        /Marie Curie[\s\S]*Already there[\s\S]*Pierre Curie[\s\S]*New customer/,
      );
      // Choosing another on_match on the preview page and pressing Import imports what the preview
      // showed: the choice only counts once the preview shows its outcomes.
      const change = page.getByText('Change what a matching row does');
      if (await change.count()) await change.click();
      await page.getByLabel('Update the customer already there').check();
      await shoot(page, 'import-review-1-preview-change');
      await clickToLoad(page, page.getByRole('button', { name: 'Import 2 rows' }));
      assert.match(page.url(), /\/jobs\//);
      // The progress page refreshes itself until the import ends (reloading it as well would race that).
      assert.match(await titleOnceLoaded(page, /^Import finished/), /^Import finished/);
      let counts = await page.locator('.counts').innerText();
      assert.match(counts, /Created\s*1/i);
      assert.match(counts, /Unchanged\s*1/i, `the import did what the preview showed: ${counts}`);
      assert.match(await page.locator('.card').first().innerText(), /keep/i);

      // Preview again with "update": the outcomes change, and Import does that (both rows differ now).
      const again = csv.replace('Curie,pierre@example.test,', 'Curie,pierre@example.test,physics');
      await clickToLoad(page, page.getByRole('link', { name: '← Customer import' }));
      await page
        .getByLabel('CSV file')
        .setInputFiles({ name: 'curie.csv', mimeType: 'text/csv', buffer: Buffer.from(again) });
      await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
      await page.getByText('Change what a matching row does').click();
      await page.getByLabel('Update the customer already there').check();
      await clickToLoad(page, page.getByRole('button', { name: 'Preview again' }));
      assert.match(page.url(), /\/dashboard\/import\/uploads\/[\w-]+\?restaurant=rest_demo&on_match=update$/);
      await page.reload();
      assert.is(await page.title(), 'Check the file · Le Demo · Couvert');
      assert.match(
        await page.locator('table.preview').innerText(),
        /Marie Curie[\s\S]*Updates a customer[\s\S]*Pierre Curie[\s\S]*Updates a customer[\s\S]*matched on email/,
      );
      assert.match(await page.locator('#go-choice').innerText(), /Update the customer already there/);
      await shoot(page, 'import-review-2-preview-again');
      await clickToLoad(page, page.getByRole('button', { name: 'Import 2 rows' }));
      assert.match(page.url(), /\/jobs\//);
      assert.match(await titleOnceLoaded(page, /^Import finished/), /^Import finished/);
      counts = await page.locator('.counts').innerText();
      assert.match(counts, /Updated\s*2/i, counts);

      // The failed import's page (the first test), as a manager reads it.
      await page.goto(`${svc.url}/dashboard/import/jobs/${ctx.failedJob}?restaurant=rest_demo`);
      assert.match(await page.getByRole('alert').innerText(), /problem on our side/);
      await shoot(page, 'import-review-3-failed');
      // The main page refusing a file larger than the budget.
      await page.goto(`${svc.url}/dashboard/import?restaurant=rest_demo`);
      await page.getByLabel('CSV file').setInputFiles({
        name: 'huge.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(csvOf('Huge', 10, BUDGET + 500)),
      });
      await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
      assert.match(await page.getByRole('alert').innerText(), /larger than this server keeps/);
      await shoot(page, 'import-review-4-over-budget');
      await context.close();
    } finally {
      await browser.close();
    }
    console.log(`screenshots: ${shots}`);
  },
);

t.run();
