// The customer import's pages as a manager sees them, in headless Chromium without JavaScript, at a
// phone's width: a preview of a file whose every row has errors offers no import and says to fix the
// file (there are no "other rows" to import); a stopped import's Finish form, sent another file, says
// why next to the file input (inside the form's card, tied to the input by aria-describedby), not only
// at the top of a long page. A running import (held at row 300) is updated in place with JavaScript,
// never reloaded, and without JavaScript offers a Stop refreshing link. Screenshots go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertAccessible, assertAccessibleAtBothWidths } from '../helpers/a11y';
import { browserAvailable, clickToLoad, launchChromium, titleOnceLoaded } from '../helpers/browser';
import { failAppendAt } from '../helpers/hooked-events';
import { oauthBootstrap, PASSWORD } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('dashboard import');
const t = suite<{ svc: TestService }>('dashboard import: headless Chromium', {} as { svc: TestService });
t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap() });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});
const test = haveBrowser ? t : t.skip;
const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-import-'));
const PHONE = { width: 390, height: 844 };

async function signIn(page: Page, base: string) {
  await page.goto(`${base}/dashboard/import?restaurant=rest_demo`);
  await page.getByLabel('Email').fill('manager@demo.test');
  await page.getByLabel('Password').fill(PASSWORD);
  await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
}

async function upload(page: Page, base: string, name: string, body: string) {
  await page.goto(`${base}/dashboard/import?restaurant=rest_demo`);
  await page.setInputFiles('#file', { name, mimeType: 'text/csv', buffer: Buffer.from(body) });
  await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
}

const overflow = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');

test('a file whose every row has errors: said so, no import offered', async ({ svc }) => {
  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ viewport: PHONE, javaScriptEnabled: false })).newPage();
    await signIn(page, svc.url);
    await upload(page, svc.url, 'bad.csv', 'name,email\n,not-an-email\n');
    assert.match(await titleOnceLoaded(page, /^Check the file/), /^Check the file/);
    await page.screenshot({ path: join(shots, 'import-all-faulty-phone.png'), fullPage: true });
    await assertAccessibleAtBothWidths(page, 'import preview, every row faulty');
    const alert = (await page.getByRole('alert').innerText()).trim();
    assert.match(alert, /The first row has errors/);
    assert.not.match(alert, /other rows/, alert);
    assert.match(alert, /No row of this file can be imported: fix it and upload it again\./);
    assert.is(await page.getByRole('button', { name: /^Import/ }).count(), 0);
    assert.is(await overflow(page), 0);
    // A file with a good row still offers the import and "the other rows".
    await upload(page, svc.url, 'mixed.csv', 'name,email\n,not-an-email\nAda,ada@example.test\n');
    assert.match(await page.getByRole('alert').innerText(), /or import the other rows/);
    // The button says what will happen (it said "Import 2 rows").
    assert.is(await page.getByRole('button', { name: 'Import 1 row (1 skipped)', exact: true }).count(), 1);
  } finally {
    await browser.close();
  }
});

test("a stopped import's Finish form, sent another file, says why next to the file input", async ({
  svc,
}) => {
  const rows = (tag: string) =>
    [
      'name,email',
      ...Array.from({ length: 600 }, (_, i) => `${tag} ${i + 1},${tag}-${i + 1}@example.test`),
    ].join('\n');
  const browser = await launchChromium();
  let restore = () => {};
  try {
    const page = await (await browser.newContext({ viewport: PHONE, javaScriptEnabled: false })).newPage();
    await signIn(page, svc.url);
    await upload(page, svc.url, 'guests.csv', rows('Stopped'));
    // The log's disk fails under row 300's customer: the import stops there.
    restore = failAppendAt(svc.rt.events, 300);
    await clickToLoad(page, page.getByRole('button', { name: 'Import 600 rows' }));
    await titleOnceLoaded(page, /^Import stopped/);
    assert.match(await page.title(), /^Import stopped/);
    await page.waitForSelector('#finish');
    restore();
    await page.setInputFiles('#file', {
      name: 'other.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(rows('Other')),
    });
    await clickToLoad(page, page.getByRole('button', { name: 'Finish the import' }));
    await page.screenshot({ path: join(shots, 'import-resume-refused-phone.png'), fullPage: true });
    await assertAccessibleAtBothWidths(page, 'stopped import, Finish refused');
    // The reason is in the Finish card, just above the input, and the input names it.
    const card = page.locator('section[aria-labelledby="finish"]');
    assert.is(await card.getByRole('alert').count(), 1, 'the refusal is in the Finish card');
    assert.match(await card.getByRole('alert').innerText(), /This is not the file this import started with/);
    assert.is(await page.locator('#file').getAttribute('aria-describedby'), 'file-error');
    assert.is(await page.locator('#file').getAttribute('aria-invalid'), 'true');
    assert.is(await page.getByText(/This is not the file this import started with/).count(), 1);
    assert.is(await overflow(page), 0);
  } finally {
    restore();
    await browser.close();
  }
});

/** What the page functions read (the tests compile without the DOM's types). */
type Doc = { document: { title: string; querySelector(s: string): { textContent: string | null } | null } };

/**
 * The job's record of import row `row` (its CustomerImportRowsRecorded) waits in the log's append until
 * `release` is called: the import is held mid-run. `atRow` gives the rows recorded by then, which stay
 * the job's progress while it is held: records are appended one at a time, so the one before is in the
 * log. (Holding a customer's append instead left the slices before it still being recorded: the
 * progress went on moving for a while, by how much depending on the machine's load.)
 */
function holdRecordOf(events: TestService['rt']['events'], row: number) {
  const store = events as { append: TestService['rt']['events']['append'] };
  const own = Object.hasOwn(store, 'append');
  const append = store.append;
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  let reached = (_recorded: number) => {};
  const atRow = new Promise<number>((r) => {
    reached = r;
  });
  store.append = async function (this: unknown, stream, batch, ...rest) {
    const record = batch.find((e) => e.type === 'CustomerImportRowsRecorded')?.data as
      | { first_row: number; last_row: number }
      | undefined;
    if (record && record.first_row <= row && row <= record.last_row) {
      reached(record.first_row - 1);
      await held;
    }
    return append.call(this, stream, batch, ...rest);
  };
  const restore = () => {
    if (own) store.append = append;
    else delete (store as { append?: unknown }).append;
  };
  return { atRow, release, restore };
}

test('a running import: updated in place with JavaScript, never reloaded; without it, a way to stop the refresh', async ({
  svc,
}) => {
  const rows = [
    'name,email',
    ...Array.from({ length: 600 }, (_, i) => `Held ${i + 1},held-${i + 1}@example.test`),
  ];
  const browser = await launchChromium();
  const hold = holdRecordOf(svc.rt.events, 300);
  try {
    const page = await (await browser.newContext({ viewport: PHONE })).newPage();
    await signIn(page, svc.url);
    await upload(page, svc.url, 'held.csv', rows.join('\n'));
    await clickToLoad(page, page.getByRole('button', { name: 'Import 600 rows' }));
    const recorded = await hold.atRow;
    assert.match(await titleOnceLoaded(page, /^Importing/), /^Importing/);
    const jobUrl = page.url();
    // A mark on this document: a reload would drop it.
    await page.evaluate('window.sameDocument = true');
    // No reload is due: the meta refresh is inert text inside <noscript> when scripts run.
    assert.is(await page.locator('meta[http-equiv="refresh"]').count(), 0);
    const status = page.getByRole('status');
    // Held at row 300, the import's progress stands still: the page shows what the server says, in
    // place (not reloaded: the mark stays).
    const served = await (await page.request.get(`${jobUrl}&refresh=off`)).text();
    const progress = /<label for="progress">([^<]+)<\/label>/.exec(served)?.[1] as string;
    assert.is(progress, `${recorded} of 600 rows (${Math.floor((recorded / 600) * 100)} %)`);
    // Functions, not strings: the page's CSP (script-src 'self') refuses to evaluate a string.
    await page.waitForFunction(
      (want) =>
        (globalThis as unknown as Doc).document.querySelector('label[for="progress"]')?.textContent === want,
      progress,
    );
    // The live region says the progress too (in steps of 10 %, so not every update).
    assert.match(
      (await status.textContent()) ?? '',
      /^[\d,]+ of 600 rows \(\d+ %\)\. This page updates itself/,
    );
    assert.match(await status.innerText(), /This page updates itself while the import runs/);
    assert.is(await status.getByRole('link', { name: 'Stop refreshing' }).count(), 1);
    await page.screenshot({ path: join(shots, 'import-running-phone.png'), fullPage: true });
    await assertAccessibleAtBothWidths(page, 'running import, with JavaScript');
    // Without JavaScript: the page refreshes itself, and says how to stop that; stopped, it offers a
    // Refresh link instead.
    const still = await (await browser.newContext({ viewport: PHONE, javaScriptEnabled: false })).newPage();
    await signIn(still, svc.url);
    await still.goto(jobUrl);
    assert.is(await still.locator('meta[http-equiv="refresh"]').count(), 1);
    await clickToLoad(still, still.getByRole('link', { name: 'Stop refreshing' }));
    assert.is(await still.locator('meta[http-equiv="refresh"]').count(), 0);
    assert.is(await still.getByRole('link', { name: 'Stop refreshing' }).count(), 0);
    assert.is(await still.getByRole('link', { name: 'Refresh', exact: true }).count(), 1);
    await still.screenshot({ path: join(shots, 'import-running-stopped-refresh-phone.png'), fullPage: true });
    await assertAccessibleAtBothWidths(still, 'running import, refresh stopped, without JavaScript');
    hold.release();
    await page.waitForFunction(() =>
      (globalThis as unknown as Doc).document.title.startsWith('Import finished'),
    );
    assert.is(
      await page.evaluate('window.sameDocument'),
      true,
      'the page was updated in place, not reloaded',
    );
    assert.match(await page.locator('label[for="progress"]').innerText(), /600 of 600 rows \(100 %\)/);
    assert.match(await page.locator('.notice[role="status"]').innerText(), /Every row is done/);
    await assertAccessible(page, 'import finished in place');
  } finally {
    hold.release();
    hold.restore();
    await browser.close();
  }
});

t.run();
