// The page tests' waits (test/helpers/browser.ts), against a loopback server whose answer to a form
// arrives in two parts (its title and body half a second after the first bytes, as a loaded machine
// may send them), in headless Chromium without JavaScript as the dashboard's tests run it: a click's
// own return comes with the first bytes (the navigation committed), so a title read then is ''.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browserAvailable, clickToLoad, launchChromium, titleOnceLoaded } from '../helpers/browser';

const haveBrowser = browserAvailable('the page tests’ waits');

interface Ctx {
  server: Server;
  base: string;
  browser: Browser;
  refreshes: number;
}
const t = suite<Ctx>('browser helpers: waiting for the page a click leads to', {} as Ctx);

t.before(async (ctx) => {
  ctx.refreshes = 0;
  ctx.server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (req.url === '/slow') {
      // The head's first bytes now (the navigation commits), the title and body later.
      res.write(`<!doctype html><html><head>${' '.repeat(2048)}`);
      setTimeout(
        () => res.end('<title>Answer</title></head><body><p id="answer">Saved</p></body></html>'),
        500,
      );
      return;
    }
    if (req.url === '/progress') {
      // A progress page refreshing itself (the import's), finished at the third look.
      ctx.refreshes++;
      res.end(
        ctx.refreshes < 3
          ? `<!doctype html><meta http-equiv="refresh" content="1"><title>Working ${ctx.refreshes}</title>`
          : `<!doctype html><title>Finished</title><p id="answer">Done</p>`,
      );
      return;
    }
    res.end(
      '<!doctype html><title>Form</title><form method="post" action="/slow"><button>Save</button></form>',
    );
  });
  await new Promise<void>((resolve) => ctx.server.listen(0, '127.0.0.1', resolve));
  ctx.base = `http://127.0.0.1:${(ctx.server.address() as AddressInfo).port}`;
  if (haveBrowser) ctx.browser = await launchChromium();
});
t.after(async (ctx) => {
  await ctx.browser?.close();
  ctx.server?.closeAllConnections();
  await new Promise((resolve) => ctx.server?.close(resolve));
});

const test = haveBrowser ? t : t.skip;

async function formPage(ctx: Ctx): Promise<Page> {
  const context = await ctx.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(ctx.base);
  assert.is(await page.title(), 'Form');
  return page;
}

test('clickToLoad returns once the page the form leads to has loaded, title and body', async (ctx) => {
  const page = await formPage(ctx);
  await clickToLoad(page, page.getByRole('button', { name: 'Save' }));
  assert.is(await page.title(), 'Answer');
  assert.is(await page.locator('#answer').count(), 1, 'the body is there');
  await page.context().close();
});

test('titleOnceLoaded, after a plain click, returns the title once the whole page is there', async (ctx) => {
  const page = await formPage(ctx);
  await page.getByRole('button', { name: 'Save' }).click();
  // A bound far above the page's half second, far below HANG_MS: a wait that never looked again at
  // the document it first met loading (page.waitForFunction without JavaScript) throws here.
  assert.is(await titleOnceLoaded(page, 'Answer', 30_000), 'Answer');
  assert.is(await page.locator('#answer').count(), 1, 'the body is there');
  await page.context().close();
});

test('titleOnceLoaded follows a page refreshing itself until the title wanted', async (ctx) => {
  const page = await formPage(ctx);
  await page.goto(`${ctx.base}/progress`);
  assert.is(await titleOnceLoaded(page, /^Finished$/), 'Finished');
  assert.is(await page.locator('#answer').textContent(), 'Done');
  assert.is(ctx.refreshes, 3);
  await page.context().close();
});

t.run();
