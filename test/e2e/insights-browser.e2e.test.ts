// The Insights page in headless Chromium (no JavaScript, as a manager's browser might run it): sign
// in, open the Insights tab on a month of seeded activity, read the charts by their accessible names,
// open a chart's numbers, switch period, check the phone layout does not scroll sideways, and the
// empty state. Screenshots at 1280×800 and 390×844 go to SCREENSHOT_DIR (a temporary directory by
// default; SCREENSHOT_DIR=docs/screenshots refreshes the committed ones).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { seedInsightsDemo } from '../../src/insights-demo';
import { assertAccessible } from '../helpers/a11y';
import { browserAvailable, clickToLoad, HANG_MS, launchChromium } from '../helpers/browser';
import { asPercent, expectedInsights, INSIGHTS_NOW, INSIGHTS_SEED } from '../helpers/insights';
import { oauthBootstrap, PASSWORD } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('insights');

const t = suite<{ svc: TestService }>('insights: headless Chromium', {} as never);
t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      {
        id: 'key_pos',
        name: 'POS',
        token: 'couvert_pk_insights_pos_0123456789abcdefghijkl',
        scopes: ['WEBHOOKS_WRITE', 'RESERVATIONS_READ'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_pos',
        url: 'https://pos.example.test/couvert/webhooks',
        api_version: 'v1',
        secret: 'whsec_insights_pos_secret_00001',
        api_key_id: 'key_pos',
      },
    ],
  });
  ctx.svc = await startTestService({ bootstrap, clock: new FixedClock(INSIGHTS_NOW) });
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_demo', INSIGHTS_SEED));
});
t.after(async (ctx) => ctx.svc?.close());

const test = haveBrowser ? t : t.skip;
const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-insights-'));

async function shoot(page: Page, name: string) {
  mkdirSync(shots, { recursive: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: join(shots, `dashboard-insights${name}-desktop.png`), fullPage: true });
  await assertAccessible(page, `Insights${name}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(shots, `dashboard-insights${name}-phone.png`), fullPage: true });
  await assertAccessible(page, `Insights${name}`);
  const overflow = (await page.evaluate(
    'document.documentElement.scrollWidth - window.innerWidth',
  )) as number;
  assert.ok(overflow <= 0, `no sideways scrolling on a phone (${overflow}px too wide)`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

const tileValue = (page: Page, label: string) =>
  page
    .locator('.tile', { has: page.locator('.tile-label', { hasText: new RegExp(`^${label}$`) }) })
    .locator('.tile-value')
    .textContent();

test('a manager reads a month at a glance, and the numbers behind each chart', async ({ svc }) => {
  const browser = await launchChromium();
  const problems: string[] = [];
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text()); // a CSP violation shows here
    });
    await page.goto(`${svc.url}/dashboard/insights?restaurant=rest_demo`);
    assert.is(await page.title(), 'Sign in · Couvert');
    await page.getByLabel('Email').fill('solo@demo.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
    assert.is(await page.title(), 'Insights · Le Demo · Couvert');
    assert.is(await page.getByRole('link', { name: 'Insights' }).getAttribute('aria-current'), 'page');
    assert.is(await page.getByRole('link', { name: 'Last 30 days' }).getAttribute('aria-current'), 'page');

    const want = expectedInsights('rest_demo', '2026-05-17', '2026-06-15');
    assert.is(await tileValue(page, 'Reservations'), String(want.reservations));
    assert.is(await tileValue(page, 'Covers'), String(want.covers));
    assert.is(await tileValue(page, 'No-show rate'), asPercent(want.noShows, want.noShows + want.honoured));
    assert.is(
      await tileValue(page, 'Webhooks delivered'),
      asPercent(want.delivered, want.delivered + want.failed),
    );
    assert.is(await tileValue(page, 'Missed calls'), String(want.calls));

    // Every chart is an image with its name; its marks are drawn.
    for (const name of [
      'Covers per day, by outcome',
      'No-show rate per day',
      'Reservations by source',
      'How far ahead bookings were made',
      'Reservations by new or returning guest',
      'Webhook delivery success rate per endpoint',
      'Missed calls by outcome',
    ]) {
      const chart = page.getByRole('img', { name });
      assert.ok(await chart.isVisible(), name);
      assert.ok((await chart.locator('rect').count()) > 0, `${name}: marks`);
      const box = await chart.boundingBox();
      assert.ok(box && box.width > 250 && box.height > 60, `${name}: drawn at a readable size`);
    }
    // Focus follows what is seen: the cards' DOM order is their reading order (top to bottom, then left
    // to right) at every width (a dense grid moved "Missed calls" above "Webhook deliveries").
    for (const width of [1280, 1024, 1600, 390]) {
      await page.setViewportSize({ width, height: 800 });
      const boxes = await page.locator('.insights-grid > .card').evaluateAll((cards) =>
        cards.map((c) => {
          const r = c.getBoundingClientRect();
          return [Math.round(r.top), Math.round(r.left)];
        }),
      );
      const read = [...boxes].sort(
        (a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number),
      );
      assert.equal(boxes, read, `cards at ${width} px: DOM order is reading order`);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    // 30 days of covers: one stacked column per day that had any.
    const days = await page.getByRole('img', { name: 'Covers per day, by outcome' }).locator('rect').count();
    assert.ok(days >= 30, `covers segments: ${days}`);
    // The registered endpoint shows by URL; the one gone by its id.
    assert.match(
      (await page.locator('#webhooks-h').locator('..').textContent()) ?? '',
      /pos\.example\.test\/couvert\/webhooks/,
    );
    assert.match((await page.locator('#webhooks-h').locator('..').textContent()) ?? '', /we_crm \(deleted\)/);
    // Lead time in words.
    assert.match(
      (await page.locator('#lead-h').locator('..').locator('.insight-summary').textContent()) ?? '',
      /^Half the bookings were made at most \d+ \w+ ahead, and 9 in 10 at most \d+ \w+ ahead/,
    );

    // A chart's numbers, without JavaScript: <details> opens.
    await page.getByText('Reservations by source: the numbers').click();
    const sourceRows = page.locator('#sources-h').locator('..').locator('tbody tr');
    assert.ok((await sourceRows.count()) >= 5);
    assert.match((await sourceRows.first().textContent()) ?? '', /^Website/);
    // Shot as a manager first sees it, one chart's numbers open (every box open and one scrolled
    // sideways, below, made the docs' picture look broken).
    await shoot(page, '');
    // A box that scrolls takes the keyboard's focus and has a name (a table of numbers scrolls
    // sideways on a phone, and down when it is long): else a keyboard cannot scroll it.
    const closed = page.locator('details.chart-data:not([open]) > summary');
    while ((await closed.count()) > 0) await closed.first().click();
    await page.setViewportSize({ width: 390, height: 844 });
    const unreachable = (await page.evaluate(`[...document.querySelectorAll('main *')].filter((e) => {
      const s = getComputedStyle(e);
      const scrolls = (/auto|scroll/.test(s.overflowX) && e.scrollWidth > e.clientWidth + 1) ||
        (/auto|scroll/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1);
      return scrolls && !(e.tabIndex >= 0 && e.getAttribute('aria-label'));
    }).map((e) => e.className + ': ' + e.textContent.slice(0, 40))`)) as string[];
    assert.equal(unreachable, [], 'scrolling boxes a keyboard cannot reach');
    const region = page.getByRole('region', { name: 'Covers per day: the numbers' });
    await region.focus();
    await page.keyboard.press('ArrowRight');
    // The scroll may be smooth (it lands over a few frames): asked again until it moved, a hang bound.
    const scrolledLeft = () => region.evaluate((e) => e.scrollLeft);
    for (const end = Date.now() + HANG_MS; (await scrolledLeft()) === 0 && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 50));
    assert.ok((await scrolledLeft()) > 0, 'the keyboard scrolls the table sideways');
    await page.setViewportSize({ width: 1280, height: 800 });

    // Another period.
    await clickToLoad(page, page.getByRole('link', { name: 'Last 7 days' }));
    assert.is(await page.getByRole('link', { name: 'Last 7 days' }).getAttribute('aria-current'), 'page');
    const week = expectedInsights('rest_demo', '2026-06-09', '2026-06-15');
    assert.is(await tileValue(page, 'Reservations'), String(week.reservations));
    await shoot(page, '-7-days');

    // A restaurant with nothing yet (the manager of several restaurants).
    const other = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: false,
    });
    const p2 = await other.newPage();
    await p2.goto(`${svc.url}/dashboard/insights?restaurant=rest_three`);
    await p2.getByLabel('Email').fill('manager@demo.test');
    await p2.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(p2, p2.getByRole('button', { name: 'Sign in' }));
    assert.match((await p2.locator('main').textContent()) ?? '', /Nothing to show for these 30 days yet/);
    assert.is(await p2.getByRole('img').count(), 0);
    await shoot(p2, '-empty');
  } finally {
    await browser.close();
  }
  assert.equal(problems, [], 'no console errors (CSP violations included)');
});

t.run();
