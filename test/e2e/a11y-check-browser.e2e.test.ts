// The page tests' accessibility check (test/helpers/a11y.ts) is not blind: a page served with the
// pages' strict CSP, with a field that has no label and grey text too faint to read, fails it (scripts
// on and off, as the page tests run), and names the rules and the elements; the same page made right
// passes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pageHeaders } from '../../src/web/headers';
import { assertAccessible } from '../helpers/a11y';
import { browserAvailable, launchChromium } from '../helpers/browser';

const haveBrowser = browserAvailable('the accessibility check');

interface Ctx {
  server: Server;
  base: string;
  browser: Browser;
}
const t = suite<Ctx>('accessibility check: axe-core in the page tests', {} as Ctx);

const WRONG = `<!doctype html><html lang="en"><head><title>Wrong</title></head><body><main>
<h1>Wrong</h1><form><input id="who" name="who"></form>
<p style="color:#bbb;background:#fff">Too faint</p></main></body></html>`;
const RIGHT = `<!doctype html><html lang="en"><head><title>Right</title></head><body><main>
<h1>Right</h1><form><label for="who">Who</label><input id="who" name="who"></form>
<p>Readable</p></main></body></html>`;

t.before(async (ctx) => {
  ctx.server = createServer((req, res) => {
    // The pages' own headers (no script may run), but with inline style allowed for the faint text.
    res.writeHead(200, {
      ...pageHeaders(),
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    });
    res.end(req.url === '/right' ? RIGHT : WRONG);
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

for (const javaScriptEnabled of [true, false]) {
  test(`a violation fails it, named by rule, impact and element (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, async ({
    browser,
    base,
  }) => {
    const context = await browser.newContext({ javaScriptEnabled });
    try {
      const page = await context.newPage();
      await page.goto(`${base}/wrong`);
      const err = await assertAccessible(page, 'the wrong page').then(
        () => null,
        (e: Error) => e,
      );
      assert.ok(err, 'the wrong page fails');
      assert.match(err.message, /on the wrong page \(1280 px wide, http:\/\/127\.0\.0\.1:\d+\/wrong\)/);
      assert.match(err.message, /label \(critical\): Form elements must have labels\n {4}#who/);
      assert.match(err.message, /color-contrast \(serious\)/);
      await page.goto(`${base}/right`);
      await assertAccessible(page, 'the right page');
    } finally {
      await context.close();
    }
  });
}

t.run();
