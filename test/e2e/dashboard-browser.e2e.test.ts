// The restaurant dashboard as a manager uses it, in headless Chromium without JavaScript: sign in;
// disconnect an application (its token then answers 401); create and revoke an API key; add a webhook
// endpoint and receive its test delivery on a loopback receiver; see a failed delivery, resend it;
// migrate a legacy endpoint (after the warning); disable, rotate, delete; import a CSV with errors and
// one without, follow the progress page, download the summary, and check the import sent no webhook.
// Then tenancy: ids of another restaurant in URLs and forms answer 404 and change nothing. Screenshots
// of each page at desktop and phone widths go to SCREENSHOT_DIR (a temporary directory by default).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertAccessible, assertAccessibleAtBothWidths } from '../helpers/a11y';
import { browserAvailable, clickToLoad, launchChromium, titleOnceLoaded } from '../helpers/browser';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  oauthBootstrap,
  PASSWORD,
  pkce,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const haveBrowser = browserAvailable('dashboard');

const FRONT_DESK = 'couvert_pk_front_desk_0123456789abcdefghijklmnop';
const OTHER = 'couvert_pk_other_restaurant_0123456789abcdefghij';

interface Ctx {
  svc: TestService;
  rx: Receiver;
}
const t = suite<Ctx>('dashboard: headless Chromium', {} as Ctx);

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  const [demo, , three] = bootstrap.restaurants as Record<string, unknown>[];
  Object.assign(demo as object, {
    customer_matching: true,
    api_keys: [
      {
        id: 'key_front',
        name: 'Front desk',
        token: FRONT_DESK,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_legacy',
        url: ctx.rx.url('/legacy'),
        api_version: 'legacy',
        secret: 'whsec_legacy_demo_secret_000001',
        api_key_id: 'key_front',
      },
    ],
  });
  Object.assign(three as object, {
    api_keys: [
      { id: 'key_other', name: 'Other POS', token: OTHER, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
    webhook_endpoints: [
      {
        id: 'we_other',
        url: ctx.rx.url('/other'),
        api_version: 'v1',
        secret: 'whsec_other_restaurant_secret_01',
        api_key_id: 'key_other',
      },
    ],
  });
  ctx.svc = await startTestService({
    bootstrap,
    env: { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
});

const test = haveBrowser ? t : t.skip;

/** Polls until `check` holds (reloading the page between tries); fails after `ms`. */
async function until(page: Page, what: string, check: () => Promise<boolean>, ms = 120_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
    await page.reload();
  }
  throw new Error(`timed out waiting for ${what}`);
}

const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-dashboard-'));

const started = Date.now();
async function shoot(page: Page, name: string) {
  if (process.env.DEBUG_TIMES) console.log(name, Date.now() - started);
  await page.screenshot({ path: join(shots, `dashboard-${name}-desktop.png`), fullPage: true });
  await assertAccessible(page, name);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(shots, `dashboard-${name}-phone.png`), fullPage: true });
  await assertAccessible(page, name);
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Every element of `targets` is at least 24 × 24 CSS pixels (WCAG 2.2, 2.5.8 Target Size, minimum). */
async function assertTapTargets(targets: Locator, what: string) {
  const n = await targets.count();
  assert.ok(n > 0, `${what}: on the page`);
  for (let i = 0; i < n; i++) {
    const box = await targets.nth(i).boundingBox();
    assert.ok(box && box.width >= 24 && box.height >= 24, `${what}: ${box?.width}×${box?.height} px`);
  }
}

async function signInAs(page: Page, base: string, email: string) {
  await page.goto(`${base}/dashboard/api-keys`);
  assert.is(await page.title(), 'Sign in · Couvert');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await clickToLoad(page, page.getByRole('button', { name: 'Sign in' }));
}

/** An OAuth token of Demo POS at Le Demo, through the consent pages over plain HTTP. */
async function connectDemoPos(svc: TestService): Promise<string> {
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope: 'CATALOG_READ RESERVATIONS_READ' }),
    restaurant: 'rest_demo',
  });
  const code = back.searchParams.get('code') as string;
  const res = await tokenRequest(svc.url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CALLBACK,
    code_verifier: verifier,
  });
  assert.is(res.status, 200, res.text);
  return res.body.access_token as string;
}

test('a manager: applications, API keys, webhooks, deliveries, migration, import', async ({ svc, rx }) => {
  const appToken = await connectDemoPos(svc);
  assert.is((await svc.api('GET', '/me', { token: appToken })).status, 200);
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
    page.on('response', (r) => {
      const csp = r.headers()['content-security-policy'];
      if (
        r.headers()['content-type']?.startsWith('text/html') &&
        r.url().startsWith(svc.url) &&
        !csp?.includes("frame-ancestors 'none'")
      )
        problems.push(`no frame-ancestors on ${r.url()}`);
    });

    // Signing in leads back to the page asked for.
    await signInAs(page, svc.url, 'manager@demo.test');
    assert.match(await page.title(), /^API keys · /);

    // Connected applications: disconnect, and the application's token stops working.
    await page.goto(`${svc.url}/dashboard?restaurant=rest_demo`);
    assert.is(
      await page.getByRole('link', { name: 'Connected applications' }).getAttribute('aria-current'),
      'page',
    );
    await shoot(page, '1-applications');
    await clickToLoad(page, page.getByRole('button', { name: 'Disconnect Demo POS' }));
    // Asked first: it cannot be undone.
    assert.is(await page.title(), 'Disconnect Demo POS? · Le Demo · Couvert');
    assert.match(await page.getByRole('alert').innerText(), /revoked and the webhook endpoints/);
    assert.is((await svc.api('GET', '/me', { token: appToken })).status, 200, 'nothing yet');
    await shoot(page, '1b-disconnect-confirm');
    await clickToLoad(page, page.getByRole('button', { name: 'Disconnect Demo POS' }));
    assert.match(await page.getByRole('status').innerText(), /Demo POS is disconnected/);
    const gone = await svc.api('GET', '/me', { token: appToken });
    assert.is(gone.status, 401);

    // API keys: create one (its token shown once, and it works), then revoke it after a confirmation.
    await clickToLoad(page, page.getByRole('link', { name: 'API keys', exact: true }));
    assert.match(await page.locator('main').innerText(), /Front desk[\s\S]*Never/);
    await page.getByLabel('Name').fill('Loyalty app');
    await page.getByLabel('See your customer records, including their personal details').check();
    await page.getByLabel('Create and change customer records').check();
    await clickToLoad(page, page.getByRole('button', { name: 'Create the key' }));
    const token = await page.locator('#secret-value').inputValue();
    assert.match(token, /^couvert_pk_/);
    await shoot(page, '2-api-key-created');
    assert.is((await svc.api('GET', '/customers', { token })).status, 200);
    // Its use shows as "last used" (recorded off the request path, once an hour at most: reloaded
    // until it shows, not read once after a sleep a loaded machine can outlast).
    const keyItem = page.locator('.items > li', { hasText: 'Loyalty app' });
    await until(page, '"last used" of the new key', async () =>
      /Last used\s*\d+ \w+ \d{4}/i.test(await keyItem.innerText()),
    );
    assert.match(await keyItem.innerText(), /Last used\s*\d+ \w+ \d{4}/i);
    await shoot(page, '2b-api-key-last-used');
    // Post/Redirect/Get: reloading shows no token and makes no second key.
    await page.reload();
    assert.is(await page.locator('#secret-value').count(), 0, 'the token is shown once');
    assert.is(await page.getByRole('button', { name: 'Revoke Loyalty app' }).count(), 1);
    await clickToLoad(page, page.getByRole('button', { name: 'Revoke Loyalty app' }));
    assert.match(await page.getByRole('alert').innerText(), /stop working at once/);
    await shoot(page, '3-revoke-confirm');
    await clickToLoad(page, page.getByRole('button', { name: 'Revoke the key' }));
    assert.match(await page.getByRole('status').innerText(), /Loyalty app.*revoked/);
    assert.is((await svc.api('GET', '/customers', { token })).status, 401);

    // Webhooks: add an endpoint (secret shown once), send a test, see it arrive.
    await clickToLoad(page, page.getByRole('link', { name: 'Webhooks', exact: true }));
    await page.getByLabel('URL').fill(rx.url('/ok'));
    await page.getByLabel('Description (optional)').fill('Our CRM');
    await clickToLoad(page, page.getByRole('button', { name: 'Add the endpoint' }));
    const secret = await page.locator('#secret-value').inputValue();
    assert.match(secret, /^whsec_/);
    await clickToLoad(page, page.getByRole('button', { name: 'Send a test' }));
    const [testHit] = await rx.waitFor('/ok', 1);
    assert.is(testHit?.headers['x-service-test'], 'true');
    assert.match(await page.getByRole('status').first().innerText(), /Test delivery succeeded.*answer 200/);
    assert.match(await page.getByRole('status').locator('pre.excerpt').innerText(), /ok/);
    await shoot(page, '4-endpoint-test');

    // Disable and enable, rotate (a new secret, shown once).
    await clickToLoad(page, page.getByRole('button', { name: 'Disable' }));
    assert.match(await page.getByRole('status').innerText(), /disabled/);
    await clickToLoad(page, page.getByRole('button', { name: 'Enable' }));
    await clickToLoad(page, page.getByRole('button', { name: 'Rotate the secret…' }));
    // A neutral explanation naming the endpoint, not an error: no alert, no error styling.
    assert.is(await page.getByRole('alert').count(), 0, 'rotating is no error');
    assert.match(
      (await page.locator('main .explain').textContent()) ?? '',
      /for http:\/\/127\.0\.0\.1:\d+\/ok/,
    );
    await shoot(page, '6b-rotate-confirm');
    await clickToLoad(page, page.getByRole('button', { name: 'Rotate the secret' }));
    const rotated = await page.locator('#secret-value').inputValue();
    assert.ok(rotated.startsWith('whsec_') && rotated !== secret);
    assert.match(await page.locator('main').innerText(), /Previous secret/i);
    const okEndpoint = new URL(page.url()).pathname;

    // A delivery the receiver refuses (400: final), then resent and accepted.
    rx.on('/flaky', { statuses: [400, 200] });
    await page.goto(`${svc.url}/dashboard/webhooks?restaurant=rest_demo`);
    await page.getByLabel('URL').fill(rx.url('/flaky'));
    await page.getByLabel('Only these:').check();
    await page.getByLabel(/A customer is created/).check();
    await clickToLoad(page, page.getByRole('button', { name: 'Add the endpoint' }));
    const flaky = page.url();
    const made = await svc.api('POST', '/customers', { token: FRONT_DESK, body: { name: 'Ada Webhook' } });
    assert.is(made.status, 201, JSON.stringify(made.body));
    await rx.waitFor('/flaky', 1);
    await page.goto(`${flaky.split('?')[0]}?restaurant=rest_demo`);
    await until(
      page,
      'the failed delivery',
      async () => (await page.locator('.badge.st-failed').count()) === 1,
    );
    await page.locator('.deliveries details summary').first().click();
    assert.match(await page.locator('.deliveries ol.attempts').first().innerText(), /400/);
    await shoot(page, '5-delivery-failed');
    await clickToLoad(page, page.getByRole('button', { name: /^Resend customer.created/ }));
    assert.match(await page.getByRole('status').innerText(), /sent again/);
    await rx.waitFor('/flaky', 2);
    await until(
      page,
      'the resent delivery',
      async () => (await page.locator('.badge.st-succeeded').count()) === 1,
    );
    await page.getByLabel('Status').selectOption('failed');
    await clickToLoad(page, page.getByRole('button', { name: 'Filter' }));
    assert.match(await page.locator('main').innerText(), /No delivery matches these filters/);
    await page.getByLabel('Status').selectOption('succeeded');
    await clickToLoad(page, page.getByRole('button', { name: 'Filter' }));
    assert.is(await page.locator('.deliveries > li').count(), 1);
    await page.locator('.deliveries details summary').first().click();
    await shoot(page, '6-delivery-resent');

    // The legacy endpoint: migrate to v1, after a warning that it is final.
    await page.goto(`${svc.url}/dashboard/webhooks?restaurant=rest_demo`);
    assert.match(await page.locator('main').innerText(), /Legacy format/);
    await shoot(page, '7-endpoints');
    await page.goto(`${svc.url}/dashboard/webhooks/we_legacy?restaurant=rest_demo`);
    await clickToLoad(page, page.getByRole('button', { name: 'Migrate to v1…' }));
    // A warning (it is final), not an error: no alert; it names the endpoint.
    assert.is(await page.getByRole('alert').count(), 0, 'migrating is no error');
    const caution = (await page.locator('main .caution').textContent()) ?? '';
    assert.match(caution, /final: it cannot be switched back/);
    assert.match(caution, /http:\/\/127\.0\.0\.1:\d+\/legacy/);
    await shoot(page, '8-migrate-confirm');
    await clickToLoad(page, page.getByRole('button', { name: 'Migrate to v1 (final)' }));
    assert.match(await page.getByRole('status').innerText(), /now receives the v1 format/);
    assert.is(await page.getByRole('button', { name: 'Migrate to v1…' }).count(), 0);
    // The manager is the actor an auditor sees.
    const migrated = (await svc.rt.events.readStream('webhook-endpoint-we_legacy')).at(-1);
    assert.is(migrated?.type, 'WebhookEndpointMigrated');
    assert.match(String(migrated?.metadata.actor), /^user:usr_/);
    const legacyApi = await svc.api('GET', '/webhook-endpoints/we_legacy', { token: FRONT_DESK });
    assert.is(legacyApi.body.data.api_version, 'v1');

    // Delete the first endpoint.
    await page.goto(`${svc.url}${okEndpoint}?restaurant=rest_demo`);
    await clickToLoad(page, page.getByRole('button', { name: /^Delete / }));
    await clickToLoad(page, page.getByRole('button', { name: 'Delete the endpoint' }));
    assert.match(await page.getByRole('status').innerText(), /deleted/);

    // Customer import: a file with errors (preview shows them; the import skips them).
    const withErrors = [
      'name,email,phone_number,tags',
      'Jeanne Martin,jeanne@example.test,06 12 34 56 78,vip|regular',
      ',nobody@example.test,,',
      'Paul Durand,not-an-email,,',
      'Ada Webhook,,,',
      'Louis Petit,louis@example.test,0698765432,',
    ].join('\r\n');
    await clickToLoad(page, page.getByRole('link', { name: 'Customer import', exact: true }));
    await shoot(page, '9-import');
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'customers.csv', mimeType: 'text/csv', buffer: Buffer.from(withErrors) });
    await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
    assert.is(await page.title(), 'Check the file · Le Demo · Couvert');
    assert.match(await page.getByRole('alert').innerText(), /2 of the first 5 rows have errors/);
    assert.is(await page.locator('tr.row-error').count(), 2);
    assert.match(await page.locator('table.preview').innerText(), /email[^\n]*valid|email/i);
    await shoot(page, '10-import-preview');
    // The button says what will happen: the rows imported, and those skipped (it said "Import 5 rows").
    await clickToLoad(page, page.getByRole('button', { name: 'Import 3 rows (2 skipped)' }));
    // The progress page refreshes itself until the import ends (reloading it as well would race that).
    assert.match(await titleOnceLoaded(page, /^Import finished/), /^Import finished/);
    const counts = await page.locator('.counts').innerText();
    assert.match(counts, /Created\s*3/i);
    assert.match(counts, /Skipped\s*2/i);
    await shoot(page, '11-import-finished');
    const summaryHref = await page
      .getByRole('link', { name: 'Download the summary (CSV)' })
      .getAttribute('href');
    const summary = await page.request.get(`${svc.url}${summaryHref}`);
    assert.is(summary.status(), 200);
    assert.match(
      summary.headers()['content-disposition'] ?? '',
      /attachment; filename="customers-summary.csv"/,
    );
    const lines = (await summary.text()).trim().split('\r\n');
    assert.is(lines[0], 'row,outcome,customer_id,matched_on,errors');
    assert.is(lines.length, 6);
    assert.match(lines[2] as string, /^2,skipped,,,name:/);

    // The same people again, without errors, updating: matched on email and phone.
    const clean = [
      'name,email,phone_number,note',
      'Jeanne Martin-Roy,jeanne@example.test,,moved',
      'Louis Petit,,+33698765432,regular',
    ].join('\n');
    await clickToLoad(page, page.getByRole('link', { name: 'Customer import', exact: true }));
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: 'update.csv', mimeType: 'text/csv', buffer: Buffer.from(clean) });
    await page.getByLabel('Update the customer already there').check();
    await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
    assert.match(await page.getByRole('status').innerText(), /no error/);
    assert.match(
      await page.locator('table.preview').innerText(),
      /Updates a customer[\s\S]*matched on email/,
    );
    await clickToLoad(page, page.getByRole('button', { name: 'Import 2 rows' }));
    assert.match(await titleOnceLoaded(page, /^Import finished/), /^Import finished/);
    assert.match(await page.locator('.counts').innerText(), /Updated\s*2/i);
    await clickToLoad(page, page.getByRole('link', { name: '← Customer import' }));
    assert.is(await page.locator('.items > li').count(), 2, 'both imports are listed');
    assert.match(
      await page.locator('.imports').innerText(),
      /update\.csv[\s\S]*by manager@demo\.test[\s\S]*customers\.csv/,
    );
    await shoot(page, '12-import-history');
    // On a phone, the small links and buttons are 24 px at least each way (WCAG 2.2, 2.5.8): the
    // history's summary links, Sign out, and an endpoint's way back to the list were 17–20 px high.
    await page.setViewportSize({ width: 390, height: 844 });
    await assertTapTargets(page.getByRole('link', { name: 'Summary (CSV)' }), 'Summary (CSV)');
    await assertTapTargets(page.getByRole('button', { name: 'Sign out' }), 'Sign out');
    await page.goto(`${svc.url}/dashboard/webhooks/we_legacy?restaurant=rest_demo`);
    await assertTapTargets(page.getByRole('link', { name: '← All endpoints' }), '← All endpoints');
    await page.setViewportSize({ width: 1280, height: 800 });
    const list = await svc.api('GET', '/customers?limit=50', { token: FRONT_DESK });
    const names = (list.body.data as { name: string }[]).map((c) => c.name).sort();
    assert.equal(names, ['Ada Webhook', 'Ada Webhook', 'Jeanne Martin-Roy', 'Louis Petit']);
    // The imports published nothing: /flaky (customer.created) has only the API-made customer's
    // delivery. The publisher fans the log out in its order, so once a customer made after the imports
    // has reached /flaky, any delivery of the imports' customers would be recorded before its own.
    const later = await svc.api('POST', '/customers', {
      token: FRONT_DESK,
      body: { name: 'After the imports' },
    });
    assert.is(later.status, 201, JSON.stringify(later.body));
    for (let n = 3; !rx.for('/flaky').some((r) => r.body.includes(later.body.data.id)); n++)
      await rx.waitFor('/flaky', n);
    const flakyId = new URL(flaky).pathname.split('/').pop() as string;
    const deliveries = await svc.api('GET', `/webhook-endpoints/${flakyId}/deliveries`, {
      token: FRONT_DESK,
    });
    assert.is(deliveries.status, 200, JSON.stringify(deliveries.body));
    assert.is(deliveries.body.data.length, 2, 'Ada Webhook’s and the later customer’s deliveries only');
    await context.close();
  } finally {
    await browser.close();
  }
  assert.equal(problems, []);
  console.log(`screenshots: ${shots}`);
});

test('tenancy: another restaurant’s ids in URLs and forms answer 404 and change nothing', async ({ svc }) => {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      javaScriptEnabled: false,
    });
    const page = await context.newPage();
    await signInAs(page, svc.url, 'solo@demo.test');
    // solo manages Le Demo only: no switcher, and Trois Étoiles is not reachable.
    assert.is(await page.getByLabel('Restaurant').count(), 0);
    for (const path of [
      '/dashboard/api-keys?restaurant=rest_three',
      '/dashboard/webhooks?restaurant=rest_three',
      '/dashboard/webhooks/we_other?restaurant=rest_three',
      '/dashboard/webhooks/we_other?restaurant=rest_demo',
      '/dashboard/webhooks/we_other',
      '/dashboard/import?restaurant=rest_three',
      '/dashboard/import/jobs/imp_nope?restaurant=rest_demo',
    ]) {
      const res = await page.goto(`${svc.url}${path}`);
      assert.is(res?.status(), 404, path);
      assert.is(await page.title(), 'Page not found · Couvert', path);
    }
    await assertAccessibleAtBothWidths(page, 'the 404 page');
    // A form of the page with another restaurant's ids typed in.
    await page.goto(`${svc.url}/dashboard/api-keys?restaurant=rest_demo`);
    const csrf = (await page.locator('input[name=csrf_token]').first().getAttribute('value')) as string;
    const post = (path: string, form: Record<string, string>) =>
      page.request.post(`${svc.url}${path}`, { form: { csrf_token: csrf, ...form }, maxRedirects: 0 });
    const attempts: [string, Record<string, string>][] = [
      ['/dashboard/api-keys/revoke', { restaurant_id: 'rest_demo', key_id: 'key_other', confirm: 'yes' }],
      ['/dashboard/api-keys/revoke', { restaurant_id: 'rest_three', key_id: 'key_other', confirm: 'yes' }],
      [
        '/dashboard/api-keys/create',
        { restaurant_id: 'rest_three', name: 'Mine now', scopes: 'CUSTOMERS_READ' },
      ],
      ['/dashboard/webhooks/we_other/delete', { restaurant_id: 'rest_demo', confirm: 'yes' }],
      ['/dashboard/webhooks/we_other/rotate', { restaurant_id: 'rest_three', confirm: 'yes' }],
      ['/dashboard/webhooks/we_other/edit', { restaurant_id: 'rest_demo', url: 'https://evil.example/' }],
      ['/dashboard/webhooks/we_legacy/deliveries/whd_nope/resend', { restaurant_id: 'rest_demo' }],
      [
        '/dashboard/webhooks/create',
        { restaurant_id: 'rest_demo', url: 'https://x.example/', key_id: 'key_other' },
      ],
      ['/dashboard/applications/disconnect', { restaurant_id: 'rest_three', client_id: 'app_demo' }],
    ];
    for (const [path, form] of attempts) {
      const res = await post(path, form);
      assert.ok([403, 404].includes(res.status()), `${path} ${JSON.stringify(form)}: ${res.status()}`);
    }
    // Without the CSRF token nothing happens either.
    const forged = await page.request.post(`${svc.url}/dashboard/api-keys/revoke`, {
      form: { csrf_token: 'forged', restaurant_id: 'rest_demo', key_id: 'key_front', confirm: 'yes' },
      maxRedirects: 0,
    });
    assert.is(forged.status(), 403);
    // Everything of the other restaurant is as it was.
    assert.is((await svc.api('GET', '/me', { token: OTHER })).status, 200);
    assert.is((await svc.api('GET', '/me', { token: FRONT_DESK })).status, 200);
    const other = await svc.api('GET', '/webhook-endpoints/we_other', { token: OTHER });
    assert.is(other.status, 200);
    assert.is(other.body.data.url.includes('/other'), true);
    // The manager of both restaurants still gets 404 for an endpoint named under the wrong restaurant.
    const context2 = await browser.newContext({ javaScriptEnabled: false });
    const page2 = await context2.newPage();
    await signInAs(page2, svc.url, 'manager@demo.test');
    const cross = await page2.goto(`${svc.url}/dashboard/webhooks/we_legacy?restaurant=rest_three`);
    assert.is(cross?.status(), 404);
    const own = await page2.goto(`${svc.url}/dashboard/webhooks/we_other?restaurant=rest_three`);
    assert.is(own?.status(), 200);
    // A viewer without "manage integrations" has no restaurant here.
    const context3 = await browser.newContext({ javaScriptEnabled: false });
    const page3 = await context3.newPage();
    await signInAs(page3, svc.url, 'viewer@demo.test');
    assert.is(await page3.title(), 'No restaurant · Couvert');
    await assertAccessibleAtBothWidths(page3, 'no restaurant');
    // Nobody signed in: every page goes to the sign-in page, every action changes nothing.
    const anon = await browser.newContext({ javaScriptEnabled: false });
    const res = await anon.request.post(`${svc.url}/dashboard/api-keys/revoke`, {
      form: { csrf_token: csrf, restaurant_id: 'rest_demo', key_id: 'key_front', confirm: 'yes' },
      maxRedirects: 0,
    });
    assert.is(res.status(), 303);
    assert.is((await svc.api('GET', '/me', { token: FRONT_DESK })).status, 200);
  } finally {
    await browser.close();
  }
});

t.run();
