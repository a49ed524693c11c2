// Long names on the pages, in headless Chromium at phone (390) and desktop (1280) widths: a restaurant's
// long name in the switcher, and names with no space to break at (an application's, an API key's, an
// endpoint's description, a CSV file's name and cells) stay inside the page's column: nothing pushes
// the page sideways on a phone or out of its card on a desktop. And a select beside its button (the
// switcher's Show, the deliveries' Filter) is as tall as it.
import type { Page } from 'playwright-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { browserAvailable, clickToLoad, signedInPage } from '../helpers/browser';
import { authorizeQuery, oauthBootstrap, pkce } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const haveBrowser = browserAvailable('long names on the pages');

/** A real restaurant's name can be long; spaces or not, the switcher's select must fit a phone. */
const LONG_NAME = 'Brasserie du Grand Café de la Place de la République et des Halles Centrales';
/** Names without a space (underscores and dots are no break opportunity). */
const UNBROKEN = 'caisse_enregistreuse_salle_principale_rez_de_chaussee_et_terrasse_ete';
const APP = 'CaisseEnregistreuseConnecteeProfessionnelleMultiSitesEtTerrasses';

interface Ctx {
  svc: TestService;
}
const t = suite<Ctx>('pages: long names in headless Chromium', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  const [demo, , three] = bootstrap.restaurants as Record<string, unknown>[];
  Object.assign(three as object, { name: LONG_NAME });
  (bootstrap.oauth_applications[0] as { name: string }).name = APP;
  Object.assign(demo as object, {
    api_keys: [
      {
        id: 'key_long',
        name: UNBROKEN,
        token: 'couvert_pk_long_names_0123456789abcdefghijklmnopq',
        scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_long',
        url: 'https://hooks.example.test/couvert',
        secret: 'whsec_long_names_secret_0000001',
        api_key_id: 'key_long',
        description: `Forwarded to ${UNBROKEN}.internal.example.test/hooks/couvert`,
      },
    ],
  });
  ctx.svc = await startTestService({ bootstrap });
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const test = haveBrowser ? t : t.skip;

/**
 * What sticks out, at the current width: the page wider than the window, or an element of main past
 * main's right edge (a table's own scrolling box excepted).
 */
const OUTSIDE = `(() => {
  const out = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) out.push('the page scrolls sideways (' + de.scrollWidth + ' > ' + de.clientWidth + ')');
  const main = document.querySelector('main');
  const edge = main.getBoundingClientRect().right - parseFloat(getComputedStyle(main).paddingRight) + 1;
  for (const el of main.querySelectorAll('*')) {
    if (el.closest('.table-wrap, .table-scroll')) continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > edge) out.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' ends at ' + Math.round(r.right) + ' past ' + Math.round(edge) + ': ' + (el.textContent || '').trim().slice(0, 40));
  }
  return out.slice(0, 5);
})()`;

async function fits(page: Page, what: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 844 });
    const outside = (await page.evaluate(OUTSIDE)) as string[];
    assert.equal(outside, [], `${what} at ${width}px`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('a long restaurant name: the switcher stays inside the column', async ({ svc }) => {
  const { browser, page } = await signedInPage(svc, '/dashboard?restaurant=rest_three', {
    javaScriptEnabled: false,
  });
  try {
    assert.is(await page.locator('#restaurant option:checked').textContent(), LONG_NAME);
    for (const path of ['/dashboard', '/dashboard/api-keys', '/dashboard/webhooks', '/dashboard/import']) {
      await page.goto(`${svc.url}${path}?restaurant=rest_three`);
      await fits(page, path);
    }
  } finally {
    await browser.close();
  }
});

test('names without a space wrap: application, API key, endpoint, CSV file', async ({ svc }) => {
  const { browser, page } = await signedInPage(
    svc,
    `/oauth/authorize?${authorizeQuery({ challenge: pkce().challenge })}`,
    { javaScriptEnabled: false },
  );
  try {
    // The restaurant choice and the consent page name the application.
    assert.match(await page.locator('main').innerText(), new RegExp(APP));
    await fits(page, 'restaurant choice');
    await page.getByLabel(/^Le Demo/).check();
    await clickToLoad(page, page.getByRole('button', { name: 'Continue' }));
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /^Allow /);
    await fits(page, 'consent');

    await page.goto(`${svc.url}/dashboard/api-keys?restaurant=rest_demo`);
    assert.match(await page.locator('main').innerText(), new RegExp(UNBROKEN));
    await fits(page, 'API keys');
    await page.goto(`${svc.url}/dashboard/webhooks/we_long?restaurant=rest_demo`);
    await fits(page, 'webhook endpoint');

    const csv = ['name,email', `${UNBROKEN}${UNBROKEN},someone@example.test`, 'Ada,ada@example.test'].join(
      '\n',
    );
    await page.goto(`${svc.url}/dashboard/import?restaurant=rest_demo`);
    await page
      .getByLabel('CSV file')
      .setInputFiles({ name: `${UNBROKEN}.csv`, mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await clickToLoad(page, page.getByRole('button', { name: 'Preview' }));
    assert.is(await page.title(), 'Check the file · Le Demo · Couvert');
    await fits(page, 'import preview');
    // On a desktop the preview's columns stay in view: the result column is not pushed out of the card.
    const card = await page.locator('table.preview').boundingBox();
    const result = await page.locator('table.preview th', { hasText: 'Result' }).boundingBox();
    const wrap = await page.locator('.table-wrap').boundingBox();
    assert.ok(
      card && result && wrap && result.x + result.width <= wrap.x + wrap.width + 1,
      'result column in view',
    );
  } finally {
    await browser.close();
  }
});

test('a select and the button beside it stand as tall as each other (switcher, delivery filters)', async ({
  svc,
}) => {
  const { browser, page } = await signedInPage(svc, '/dashboard/webhooks/we_long?restaurant=rest_demo', {
    javaScriptEnabled: false,
  });
  try {
    for (const [path, select, button] of [
      ['/dashboard/webhooks', '#restaurant', '.switcher button'],
      ['/dashboard/webhooks/we_long', '#f-type', '.filters button'],
    ] as const) {
      await page.goto(`${svc.url}${path}?restaurant=rest_demo`);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 });
        const a = await page.locator(select).boundingBox();
        const b = await page.locator(button).boundingBox();
        assert.ok(a && b, `${select} and ${button} are shown`);
        if (!a || !b) continue;
        // Side by side (the button is not wrapped under the select at either width)…
        assert.ok(b.x >= a.x + a.width, `${button} beside ${select} at ${width}px`);
        // …with the same top and bottom: neither sticks out (a select's box was 4–5 px shorter).
        assert.ok(Math.abs(a.y - b.y) <= 1, `${select} top ${a.y}, ${button} top ${b.y} at ${width}px`);
        assert.ok(
          Math.abs(a.y + a.height - (b.y + b.height)) <= 1,
          `${select} bottom ${a.y + a.height}, ${button} bottom ${b.y + b.height} at ${width}px`,
        );
      }
    }
  } finally {
    await browser.close();
  }
});

t.run();
