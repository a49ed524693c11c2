// The customer import's pages as a manager sees them, in headless Chromium without JavaScript, at a
// phone's width: a preview of a file whose every row has errors offers no import and says to fix the
// file (there are no "other rows" to import); a stopped import's Finish form, sent another file, says
// why next to the file input (inside the form's card, tied to the input by aria-describedby), not only
// at the top of a long page. Screenshots go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertAccessibleAtBothWidths } from '../helpers/a11y';
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
    assert.is(await page.getByRole('button', { name: 'Import 2 rows' }).count(), 1);
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

t.run();
