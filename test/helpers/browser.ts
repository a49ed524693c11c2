// Headless Chromium for the page tests: Debian's build driven by playwright-core (no browser
// download), with the flags this machine needs. .ci/run installs it and sets REQUIRE_BROWSER=1, so a
// missing browser fails CI instead of skipping the page tests silently.
//
// Waiting, on a loaded 2-core CI machine: a click on a link or a form's button returns once the next
// page has started to arrive (its navigation committed), not once it has loaded, so a read right after
// it (page.title(), a locator's count(), a layout measure, a screenshot) can meet an empty or half-parsed
// document. A test clicks its way to another page with `clickToLoad` (or reads a title it expects with
// `titleOnceLoaded`), and every wait is bounded by HANG_MS, a hang limit, never by the machine's speed.
import { existsSync } from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { PASSWORD } from './oauth';
import type { TestService } from './service';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * How long a page test waits for anything (an action, a navigation, a state it asserts) before it
 * fails: a hang bound only, as REQUEST_HANG_MS is for requests (under the runner's 300 s per file).
 */
export const HANG_MS = 120_000;

/** Whether the browser is here; logs a visible SKIP naming `what` when it is not (and CI allows it). */
export function browserAvailable(what: string): boolean {
  const have = existsSync(CHROMIUM);
  if (!have && process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`);
  if (!have) console.log(`SKIP ${what} in a browser: ${CHROMIUM} is missing (.ci/run installs it)`);
  return have;
}

/**
 * Chromium, whose contexts (browser.newContext(), browser.newPage()) wait HANG_MS for an action or a
 * navigation instead of playwright's 30 s: a loaded machine is slow, not wrong.
 */
export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    timeout: HANG_MS,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(HANG_MS);
    context.setDefaultNavigationTimeout(HANG_MS);
    return context;
  };
  return browser;
}

/**
 * Clicks `target` (a link, a form's button) and returns once the page it leads to has loaded (its
 * `load` event: the whole document parsed, its stylesheet applied), so what the test reads next is that
 * page's. Only for a click that leads to another page: one that does not (a <summary>) would wait HANG_MS.
 */
export async function clickToLoad(page: Page, target: Locator): Promise<void> {
  // Listening before the click: the next `load` is the new page's, whenever its navigation starts.
  const loaded = page.waitForEvent('load', { timeout: HANG_MS });
  loaded.catch(() => {}); // awaited below; a failed click must not leave it unhandled
  await target.click();
  await loaded;
}

/**
 * The page's title once a whole document titled `expected` is there (through navigations: a form's
 * answer, a progress page refreshing itself), or once HANG_MS have passed: then the title is whatever
 * came, and the caller's assertion names it. The page's body is parsed when this returns.
 * Polled from here, not with page.waitForFunction: without JavaScript (the dashboard's tests) a
 * waitForFunction that first meets a document still loading never looks again, and waits out its bound.
 * `withinMs`, a bound of the caller's instead of HANG_MS (the helper's own test): past it, this throws.
 */
export async function titleOnceLoaded(
  page: Page,
  expected: string | RegExp,
  withinMs?: number,
): Promise<string> {
  const matches = (title: string) =>
    typeof expected === 'string' ? title === expected : expected.test(title);
  const end = Date.now() + (withinMs ?? HANG_MS);
  for (;;) {
    // Between two documents the evaluation can fail (its context gone): look again.
    const seen = (await page.evaluate('[document.readyState, document.title]').catch(() => null)) as
      | [string, string]
      | null;
    if (seen && seen[0] === 'complete' && matches(seen[1])) return seen[1];
    if (Date.now() > end) {
      if (withinMs === undefined) return page.title();
      throw new Error(
        `no whole page titled ${String(expected)} within ${withinMs} ms: ${await page.title()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** How the page of `signedInPage` is opened: a desktop's width and scripts on unless told. */
export interface SignedInOptions {
  viewport?: { width: number; height: number };
  javaScriptEnabled?: boolean;
  /** Who signs in (the demo's manager unless told). */
  email?: string;
}

/**
 * A browser signed in (by the sign-in form `path` leads to) and the page it lands on; the browser is
 * closed here if the sign-in fails (else it outlives the suite). The caller closes it otherwise.
 */
export async function signedInPage(
  svc: TestService,
  path: string,
  options: SignedInOptions = {},
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({
      viewport: options.viewport ?? { width: 1280, height: 800 },
      javaScriptEnabled: options.javaScriptEnabled ?? true,
    });
    const page = await context.newPage();
    await page.goto(`${svc.url}${path}`);
    await page.getByLabel('Email').fill(options.email ?? 'manager@demo.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
    return { browser, page };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
