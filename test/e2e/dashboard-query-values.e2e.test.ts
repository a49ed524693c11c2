// A dashboard page's query parameter that chooses what the page shows takes only the values the page
// writes itself: any other answers 400, the page naming the parameter and the values it takes, as
// ?period= on the insights page always did. The import progress page's ?refresh= (only `off`: its
// Stop refreshing link) said so in the API's quoting; the upload preview's ?on_match= previewed the
// choice last made for any value it did not know; the endpoint page's ?before= (its link to older
// deliveries) listed from the newest for a damaged link, as if asked to. Parameters that only carry an
// action's notice (done, revoked, disconnected) are another matter: said when true, else nothing
// (dashboard-forms e2e).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, formFields, oauthBootstrapWith, pageText, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const FRONT = 'couvert_pk_front_desk_queryvalues_0123456789abcde';

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('dashboard pages: query values they do not take', {} as Ctx);

t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrapWith({
      api_keys: [
        { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
      ],
    }),
  });
  ctx.b = new Browser(ctx.svc.url);
  const first = await ctx.b.get('/dashboard/import?restaurant=rest_demo');
  assert.is((await signIn(ctx.b, await ctx.b.get(first.location as string), 'solo@demo.test')).status, 303);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

/** A 400 page naming what was wrong (and nothing of the page it refused to show). */
async function refused(b: Browser, path: string, says: RegExp) {
  const res = await b.get(path);
  assert.is(res.status, 400, `${path}: ${res.status}`);
  assert.match(pageText(res.text), says, path);
  return res;
}

t('the import progress page takes refresh=off only', async ({ b }) => {
  const page = await b.get('/dashboard/import?restaurant=rest_demo');
  const form = new FormData();
  for (const [k, v] of Object.entries(formFields(page.text, '/dashboard/import/upload'))) form.append(k, v);
  form.append(
    'file',
    new Blob(['name,email\nAda Query,ada.query@example.com\n'], { type: 'text/csv' }),
    'g.csv',
  );
  const preview = await b.followed(b.postMultipart('/dashboard/import/upload', form));
  assert.is(preview.status, 200, preview.text.slice(0, 300));
  const started = await b.post(
    '/dashboard/import/start',
    formFields(preview.text, '/dashboard/import/start'),
  );
  assert.is(started.status, 303, started.text.slice(0, 300));
  const job = started.location as string;
  for (let end = Date.now() + 120_000; !(await b.get(job)).text.includes('Import finished'); ) {
    assert.ok(Date.now() < end, 'the import finished');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.is((await b.get(`${job}&refresh=off`)).status, 200);
  for (const value of ['on', '', 'OFF', 'false', '0'])
    assert.not.match(
      (
        await refused(
          b,
          `${job}&refresh=${value}`,
          /holds a value the page does not take: refresh must be off/,
        )
      ).text,
      'Import finished',
    );
});

t('the upload preview takes the on_match values it previews', async ({ b }) => {
  const page = await b.get('/dashboard/import?restaurant=rest_demo');
  const form = new FormData();
  for (const [k, v] of Object.entries(formFields(page.text, '/dashboard/import/upload'))) form.append(k, v);
  form.append('file', new Blob(['name\nBea Query\n'], { type: 'text/csv' }), 'h.csv');
  const res = await b.postMultipart('/dashboard/import/upload', form);
  assert.is(res.status, 303);
  const preview = res.location as string;
  assert.match(preview, /^\/dashboard\/import\/uploads\/[\w-]+\?restaurant=rest_demo$/);
  const chosen = await b.get(`${preview}&on_match=update`);
  assert.is(chosen.status, 200);
  assert.match(chosen.text, /value="update" checked/);
  for (const value of ['merge', '', 'UPDATE'])
    await refused(
      b,
      `${preview}&on_match=${value}`,
      /on_match must be one of return_existing, update or create_new/,
    );
});

t("the endpoint page's link to older deliveries: a damaged one is said, with 400", async ({ b, svc }) => {
  const made = await svc.api('POST', '/webhook-endpoints', {
    token: FRONT,
    body: { url: 'https://example.com/older' },
  });
  assert.is(made.status, 201, made.text);
  const page = `/dashboard/webhooks/${made.body.data.id}?restaurant=rest_demo`;
  const fine = await b.get(`${page}&before=${encodeURIComponent('2026-06-02T10:00:00.000Z|whd_0123abcd')}`);
  assert.is(fine.status, 200);
  // The demo seeder's ids (src/insights-demo.ts), which a fresh start's endpoint pages link to.
  const demo = await b.get(
    `${page}&before=${encodeURIComponent('2026-11-01T10:42:17.301Z|whd_demo_rest_demo_2026-11-01_0_1')}`,
  );
  assert.is(demo.status, 200, pageText(demo.text));
  for (const value of [
    'garbage',
    '',
    '|whd_1',
    '2026-06-02|whd_1',
    '2026-06-02T10:00:00.000Z|',
    'yesterday|whd_1',
  ]) {
    const res = await b.get(`${page}&before=${encodeURIComponent(value)}`);
    assert.is(res.status, 400, `before=${value}`);
    assert.match(
      pageText(res.text),
      'The link to older deliveries is damaged (before= takes the time and id of a delivery listed, as the page writes them): the newest deliveries are shown.',
    );
    // The page itself, as for a filter it cannot apply: the endpoint and its (newest) deliveries.
    assert.match(res.text, 'https://example.com/older');
  }
});

t.run();
