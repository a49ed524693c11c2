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
  /** Every path the server was asked for. */
  requests: string[];
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

/** A page with its stylesheet, `href` the stylesheet's path. */
const styled = (href: string) =>
  `<!doctype html><html lang="en"><head><title>Styled</title><link rel="stylesheet" href="${href}"></head><body><main>
<h1>Styled</h1><p class="note">Readable</p></main></body></html>`;
/** Unlabelled selects, one in a library's subtree (#library), one in the page's own markup. */
const LIBRARY = `<!doctype html><html lang="en"><head><title>Library</title></head><body><main>
<h1>Library</h1><div id="library"><select><option>a</option></select></div>
<select id="ours"><option>b</option></select></main></body></html>`;
const PAGES: Record<string, string> = {
  '/right': RIGHT,
  '/styled': styled('/style.css'),
  '/unstyled': styled('/missing.css'),
  '/library': LIBRARY,
};

t.before(async (ctx) => {
  ctx.requests = [];
  ctx.server = createServer((req, res) => {
    ctx.requests.push(req.url ?? '');
    if (req.url === '/style.css') {
      res.writeHead(200, { 'content-type': 'text/css; charset=utf-8' });
      res.end('.note { color: #222; background: #fff; }');
      return;
    }
    if (req.url === '/missing.css') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('not found');
      return;
    }
    // The pages' own headers (no script may run), but with inline style allowed for the faint text.
    res.writeHead(200, {
      ...pageHeaders(),
      'content-security-policy': "default-src 'none'; style-src 'self' 'unsafe-inline'",
    });
    res.end(PAGES[req.url ?? ''] ?? WRONG);
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

test('with JavaScript off, the twin page is this page even at a URL with a #fragment (not fetched again)', async ({
  browser,
  base,
  requests,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(`${base}/styled#section`);
    const before = requests.filter((r) => r === '/styled').length;
    await assertAccessible(page, 'the styled page');
    assert.is(requests.filter((r) => r === '/styled').length, before, 'the twin asked the server again');
  } finally {
    await context.close();
  }
});

test('with JavaScript off, a stylesheet the twin page could not load fails the check', async ({
  browser,
  base,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(`${base}/unstyled`);
    const err = await assertAccessible(page, 'the unstyled page').then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(err, 'a twin without its stylesheet is not judged');
    assert.match(err.message, /the stylesheet\(s\) http:\/\/127\.0\.0\.1:\d+\/missing\.css did not load/);
  } finally {
    await context.close();
  }
});

test("an exception holds inside the library's subtree only: the same rule broken in the page's own markup fails", async ({
  browser,
  base,
}) => {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${base}/library`);
    const err = await assertAccessible(page, 'the library page', {
      within: '#library',
      rules: { 'select-name': "the library's select has no label" },
    }).then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(err, 'our own unlabelled select is found');
    assert.match(err.message, /select-name \(critical\): [^\n]*\n {4}#ours/);
    assert.not.match(err.message, /#library/);
  } finally {
    await context.close();
  }
});

t.run();
