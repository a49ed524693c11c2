// The Insights page in headless Chromium at the ends of its range: a restaurant with a year of activity
// read over the longest period (90 days), and one with a single day of activity, each at desktop and
// phone widths: the tiles agree with the events, every chart is drawn at a readable size, nothing
// scrolls sideways on a phone. Screenshots go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { seedInsightsDemo } from '../../src/insights-demo';
import { assertAccessible } from '../helpers/a11y';
import { browserAvailable, clickToLoad, launchChromium } from '../helpers/browser';
import { expectedInsights, INSIGHTS_NOW, INSIGHTS_SEED } from '../helpers/insights';
import { oauthBootstrap, PASSWORD } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('insights ranges');
const YEAR = { ...INSIGHTS_SEED, days: 365, seed: 7 };
const ONE_DAY = { ...INSIGHTS_SEED, days: 1, seed: 3 };

const t = suite<{ svc: TestService }>(
  'insights: a year, and a single day, in headless Chromium',
  {} as never,
);
t.before(async (ctx) => {
  ctx.svc = await startTestService({ bootstrap: oauthBootstrap(), clock: new FixedClock(INSIGHTS_NOW) });
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_two', YEAR));
  await ctx.svc.rt.settle(await seedInsightsDemo(ctx.svc.rt, 'rest_three', ONE_DAY));
});
t.after(async (ctx) => ctx.svc?.close());

t(
  'a caller who booked after a missed call is in the log after the call, and counted as following it',
  async ({ svc }) => {
    const matched = new Map<string, bigint>();
    const booked: [string, bigint][] = [];
    for await (const e of svc.rt.events.readAll()) {
      if (e.type === 'MissedCallMatched' && e.data.restaurant_id === 'rest_two')
        matched.set(e.data.customer_id as string, e.position);
      if (
        e.type === 'ReservationCreated' &&
        String(e.data.reservation_id).startsWith('res_demo_rest_two_call_')
      )
        booked.push([(e.data.reservation as { customer_id: string }).customer_id, e.position]);
    }
    assert.ok(booked.length > 50, `the year has callers who booked: ${booked.length}`);
    const early = booked.filter(([customer, at]) => !(at > (matched.get(customer) ?? at)));
    assert.is(early.length, 0, `${early.length} of ${booked.length} bookings precede their call in the log`);
    let followed = 0;
    const days = svc.rt.docs.collection<{ _id: string; followed_by_reservation?: number }>(
      'analytics_missed_call_days',
    );
    for (const d of await days.find({ restaurant_id: 'rest_two' }))
      followed += d.followed_by_reservation ?? 0;
    assert.ok(followed > 50, `calls followed by a booking: ${followed}`);
  },
);

const test = haveBrowser ? t : t.skip;
const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-insights-ranges-'));

async function shoot(page: Page, name: string) {
  mkdirSync(shots, { recursive: true });
  for (const [width, height, kind] of [
    [1280, 800, 'desktop'],
    [390, 844, 'phone'],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.screenshot({ path: join(shots, `dashboard-insights-${name}-${kind}.png`), fullPage: true });
    await assertAccessible(page, `Insights ${name}`);
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - window.innerWidth',
    )) as number;
    assert.ok(overflow <= 0, `${name}: no sideways scrolling at ${width}px (${overflow}px too wide)`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

const tileValue = (page: Page, label: string) =>
  page
    .locator('.tile', { has: page.locator('.tile-label', { hasText: new RegExp(`^${label}$`) }) })
    .locator('.tile-value')
    .textContent();

async function chartsDrawn(page: Page, what: string): Promise<void> {
  const charts = page.locator('svg.chart');
  assert.ok((await charts.count()) >= 5, `${what}: the charts`);
  for (let i = 0; i < (await charts.count()); i++) {
    const box = await charts.nth(i).boundingBox();
    // A bar chart of one row is short; every chart is as wide as its card.
    assert.ok(box && box.width > 250 && box.height > 20, `${what}: chart ${i} drawn at a readable size`);
  }
}

test('a year of activity over 90 days, and a single day, read at a glance', async ({ svc }) => {
  const browser = await launchChromium();
  const problems: string[] = [];
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(`${svc.url}/dashboard/insights?restaurant=rest_two&period=90`);
    await page.getByLabel('Email').fill('manager@demo.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
    assert.is(await page.getByRole('link', { name: 'Last 90 days' }).getAttribute('aria-current'), 'page');
    const quarter = expectedInsights('rest_two', '2026-03-18', '2026-06-15', YEAR);
    assert.is(await tileValue(page, 'Reservations'), String(quarter.reservations));
    assert.is(await tileValue(page, 'Covers'), String(quarter.covers));
    await chartsDrawn(page, '90 days of a year');
    assert.match(
      (await page.locator('#calls-h').locator('..').textContent()) ?? '',
      /; [1-9]\d* (?:was|were) followed by a booking within 7 days/,
    );
    const columns = await page
      .getByRole('img', { name: 'Covers per day, by outcome' })
      .locator('rect')
      .count();
    assert.ok(columns >= 90, `one column (or more) per day: ${columns}`);
    await shoot(page, 'year-90-days');

    await page.goto(`${svc.url}/dashboard/insights?restaurant=rest_three&period=7`);
    const day = expectedInsights('rest_three', '2026-06-09', '2026-06-15', ONE_DAY);
    assert.ok(day.reservations > 0, 'the single day has reservations');
    assert.is(await tileValue(page, 'Reservations'), String(day.reservations));
    await chartsDrawn(page, 'one day');
    await shoot(page, 'one-day');
  } finally {
    await browser.close();
  }
  assert.equal(problems, [], 'no console errors (CSP violations included)');
});

t.run();
