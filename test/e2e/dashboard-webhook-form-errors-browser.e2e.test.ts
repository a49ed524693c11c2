// A refused webhook form, in headless Chromium at a phone's width, without JavaScript and with it: the
// reason stands inside the form, next to the field it is about (not atop the page, a screen or ten
// away past the endpoints or the deliveries), the field names it (aria-describedby) and is marked
// invalid, the browser focuses the first one (autofocus: no script needed), and what was typed is kept.
// A refused action (Send a test…) says why next to its button, which takes the focus.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertAccessibleAtBothWidths } from '../helpers/a11y';
import { browserAvailable, clickToLoad, signedInPage } from '../helpers/browser';
import { oauthBootstrap } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('refused webhook forms');
/** What the manager sees once the refused form is back (the screen the focus brought), for the docs. */
const shots = process.env.SCREENSHOT_DIR ?? mkdtempSync(join(tmpdir(), 'couvert-form-errors-'));

interface Ctx {
  svc: TestService;
}
const t = suite<Ctx>('dashboard: refused webhook forms in headless Chromium', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  const keys = ['front', 'bar', 'terrace'].map((n) => ({
    id: `key_${n}`,
    name: `Till ${n}`,
    token: `couvert_pk_form_errors_${n}_0123456789abcdefghijklmnopq`,
    scopes: ['CUSTOMERS_READ', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'],
  }));
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: keys,
    // Enough endpoints that the create form is several screens below the top of the page on a phone.
    // Nothing is sent to them: the suite runs without the webhooks role.
    webhook_endpoints: Array.from({ length: 8 }, (_, i) => ({
      id: `we_${i}`,
      url: `https://hooks.example.test/couvert/restaurant-integration/endpoint-${i}`,
      api_version: i === 7 ? 'legacy' : 'v1',
      secret: `whsec_form_errors_secret_000${i}`,
      api_key_id: i === 6 ? 'key_terrace' : 'key_front',
    })),
  });
  ctx.svc = await startTestService({ bootstrap });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const test = haveBrowser ? t : t.skip;

/** A phone's width, with or without scripts. */
const PHONE = (javaScriptEnabled: boolean) => ({ viewport: { width: 390, height: 844 }, javaScriptEnabled });

interface Focused {
  id: string;
  tag: string;
  invalid: string | null;
  /** What a screen reader reads as its description: the text of the elements aria-describedby names. */
  description: string;
  /** The form it is in (its action). */
  form: string | null;
}

const focused = (page: Page) =>
  page.evaluate(`(() => {
    const a = document.activeElement;
    const ids = (a.getAttribute('aria-describedby') || '').split(/\\s+/).filter(Boolean);
    return {
      id: a.id,
      tag: a.tagName.toLowerCase(),
      invalid: a.getAttribute('aria-invalid'),
      description: ids.map((id) => (document.getElementById(id) || { textContent: '' }).textContent.trim()).join(' '),
      form: a.form ? a.form.getAttribute('action') : null,
    };
  })()`) as Promise<Focused>;

/** Every alert of the page: its text, the form (or section) it stands in, whether it is in view. */
const alerts = (page: Page) =>
  page.evaluate(`[...document.querySelectorAll('[role=alert]')].map((el) => {
    const r = el.getBoundingClientRect();
    const form = el.closest('form');
    return {
      id: el.id,
      text: el.textContent.trim(),
      form: form ? form.getAttribute('action') : null,
      inView: r.top >= 0 && r.bottom <= window.innerHeight,
    };
  })`) as Promise<{ id: string; text: string; form: string | null; inView: boolean }[]>;

for (const javaScriptEnabled of [false, true]) {
  test(`create (${javaScriptEnabled ? 'with' : 'without'} JavaScript): each reason in the form, next to its field, focused, values kept`, async ({
    svc,
  }) => {
    const { browser, page } = await signedInPage(
      svc,
      '/dashboard/webhooks?restaurant=rest_demo',
      PHONE(javaScriptEnabled),
    );
    try {
      await page.locator('#new-url').fill('http://hooks.example.test/not-https');
      await page.locator('#new-description').fill('Front desk, kept');
      await page.locator('#new-headers').fill('X-Till: 1\nnot a header');
      await page.locator('#new-key').selectOption('key_bar');
      await clickToLoad(page, page.getByRole('button', { name: 'Add the endpoint' }));
      const said = await alerts(page);
      assert.equal(
        said.map((a) => [a.id, a.form]),
        [
          ['new-url-error', '/dashboard/webhooks/create'],
          ['new-headers-error', '/dashboard/webhooks/create'],
        ],
        'each reason inside the form, none atop the page',
      );
      assert.match(said[0]?.text ?? '', /The URL must be an https:\/\/ URL/);
      assert.match(said[1]?.text ?? '', /“not a header” is not written as Name: value/);
      // The first field refused has the focus, names its reason, and is marked invalid; it is in view.
      const f = await focused(page);
      assert.equal([f.id, f.invalid], ['new-url', 'true']);
      assert.match(f.description, /^The URL must be an https:\/\/ URL\. HTTPS, reachable/);
      assert.ok(said[0]?.inView, 'the URL’s reason is on the screen the focus brought');
      await assertAccessibleAtBothWidths(page, 'new endpoint refused (URL, headers)');
      if (!javaScriptEnabled)
        await page.screenshot({ path: join(shots, 'dashboard-15-endpoint-refused-phone.png') });
      assert.is(
        await page.locator('#new-headers').getAttribute('aria-describedby'),
        'new-headers-error new-headers-help',
      );
      assert.is(await page.locator('#new-headers').getAttribute('aria-invalid'), 'true');
      assert.is(await page.locator('#new-description').getAttribute('aria-invalid'), null);
      // What was typed is kept.
      assert.is(await page.locator('#new-url').inputValue(), 'http://hooks.example.test/not-https');
      assert.is(await page.locator('#new-description').inputValue(), 'Front desk, kept');
      assert.is(await page.locator('#new-headers').inputValue(), 'X-Till: 1\nnot a header');
      assert.is(await page.locator('#new-key').inputValue(), 'key_bar');

      // No event chosen: said in the Events group, the choice made has the focus and names it.
      await page.locator('#new-url').fill('https://hooks.example.test/fine');
      await page.locator('#new-headers').fill('');
      await page.getByLabel('Only these:').check();
      await clickToLoad(page, page.getByRole('button', { name: 'Add the endpoint' }));
      const events = await alerts(page);
      assert.equal(
        events.map((a) => [a.id, a.form, a.text]),
        [['new-events-error', '/dashboard/webhooks/create', 'Choose at least one event, or every event.']],
      );
      assert.is(
        await page.locator('fieldset:has(#new-events-error)').getAttribute('aria-describedby'),
        'new-events-error',
      );
      const g = await focused(page);
      assert.equal([g.tag, g.form, g.description], ['input', '/dashboard/webhooks/create', events[0]?.text]);
      assert.ok(await page.getByLabel('Only these:').isChecked(), 'the choice is kept');
      assert.ok(events[0]?.inView);
      assert.is(await page.locator('#new-url').inputValue(), 'https://hooks.example.test/fine');
      await assertAccessibleAtBothWidths(page, 'new endpoint refused (no event)');
    } finally {
      await browser.close();
    }
  });
}

test('edit: the reason stands in the edit form, below the deliveries, next to the URL', async ({ svc }) => {
  const { browser, page } = await signedInPage(
    svc,
    '/dashboard/webhooks/we_0?restaurant=rest_demo',
    PHONE(false),
  );
  try {
    await page.locator('#edit-url').fill('https://10.0.0.1/hook');
    await page.locator('#edit-description').fill('Kept as typed');
    await clickToLoad(page, page.getByRole('button', { name: 'Save changes' }));
    const said = await alerts(page);
    assert.equal(
      said.map((a) => [a.id, a.form]),
      [['edit-url-error', '/dashboard/webhooks/we_0/edit']],
    );
    assert.match(said[0]?.text ?? '', /^The URL must not target a private, loopback or reserved address\.$/);
    const f = await focused(page);
    assert.equal([f.id, f.invalid], ['edit-url', 'true']);
    assert.match(f.description, /^The URL must not target a private/);
    assert.ok(said[0]?.inView);
    assert.is(await page.locator('#edit-url').inputValue(), 'https://10.0.0.1/hook');
    assert.is(await page.locator('#edit-description').inputValue(), 'Kept as typed');
    await assertAccessibleAtBothWidths(page, 'endpoint edit refused');
    // Nothing was saved.
    const saved = await svc.api('GET', '/webhook-endpoints/we_0', {
      token: 'couvert_pk_form_errors_front_0123456789abcdefghijklmnopq',
    });
    assert.is(saved.body.data.url, 'https://hooks.example.test/couvert/restaurant-integration/endpoint-0');
  } finally {
    await browser.close();
  }
});

test('a refused test: said next to Send a test, which has the focus', async ({ svc }) => {
  const { browser, page } = await signedInPage(svc, '/dashboard/api-keys?restaurant=rest_demo', PHONE(false));
  try {
    // The terrace till's key is revoked; without the webhooks role its endpoint stays (the publisher
    // deletes a revoked key's endpoints), so a test of it is refused: the credential is revoked.
    await clickToLoad(page, page.getByRole('button', { name: 'Revoke Till terrace' }));
    await clickToLoad(page, page.getByRole('button', { name: 'Revoke the key' }));
    await page.goto(`${svc.url}/dashboard/webhooks/we_6?restaurant=rest_demo`);
    await clickToLoad(page, page.getByRole('button', { name: 'Send a test' }));
    const said = await alerts(page);
    assert.equal(said.length, 1, JSON.stringify(said));
    assert.is(said[0]?.id, 'action-error');
    assert.match(said[0]?.text ?? '', /credential is revoked/);
    // Right above the actions of the endpoint's card, not atop the page.
    assert.ok(
      await page.locator('section[aria-labelledby="ep-url"] #action-error + .row-actions').count(),
      'next to the buttons',
    );
    const f = await focused(page);
    assert.equal([f.tag, f.form], ['button', '/dashboard/webhooks/we_6/test']);
    assert.match(f.description, /credential is revoked/);
    assert.ok(said[0]?.inView);
    await assertAccessibleAtBothWidths(page, 'test delivery refused');
  } finally {
    await browser.close();
  }
});

test('the API key form, refused, focuses what it is about (as the webhook forms do)', async ({ svc }) => {
  const { browser, page } = await signedInPage(svc, '/dashboard/api-keys?restaurant=rest_demo', PHONE(false));
  try {
    await page.locator('#key-name').fill('Kept name');
    await clickToLoad(page, page.getByRole('button', { name: 'Create the key' }));
    const said = await alerts(page);
    assert.equal(
      said.map((a) => [a.id, a.form]),
      [['key-error', '/dashboard/api-keys/create']],
    );
    const f = await focused(page);
    assert.equal([f.tag, f.form], ['input', '/dashboard/api-keys/create']);
    assert.is(f.description, said[0]?.text);
    assert.ok(said[0]?.inView);
    assert.is(await page.locator('#key-name').inputValue(), 'Kept name');
    await assertAccessibleAtBothWidths(page, 'API key refused');
  } finally {
    await browser.close();
  }
});

test('API keys of a restaurant with none: no note about when keys were last used', async ({ svc }) => {
  const { browser, page } = await signedInPage(svc, '/dashboard/api-keys?restaurant=rest_two', PHONE(false));
  try {
    const main = await page.locator('main').innerText();
    assert.match(main, /Chez Deux has no API key\./);
    assert.not.match(main, /Last used/, 'nothing is used: the note about it only puzzles');
    await assertAccessibleAtBothWidths(page, 'API keys, none yet');
    assert.match(main, /Applications connected through OAuth are under Connected applications\./);
    await page.goto(`${svc.url}/dashboard/api-keys?restaurant=rest_demo`);
    assert.match(await page.locator('main').innerText(), /“Last used” is recorded at most once an hour/);
  } finally {
    await browser.close();
  }
});

t.run();
