// The dashboard's gaps, over HTTP as a browser without JavaScript drives it: API keys' and OAuth
// tokens' "last used" (recorded at most once an hour, off the request path, and still there after a
// restart; `keys list` shows it); every delivery attempt's answer excerpt (bounded, escaped, folded when
// long, never an echoed signature); the import history read model and "one import at a time" decided
// on the write side; every dashboard action's events naming the manager (`user:<id>`), read back
// through the audit module and `audit history`; `audit verify` on a server with sessions and versioned
// aliases reports no difference.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyUsageStream } from '../../commands/credentials/usage';
import { startImportJob } from '../../commands/customer-import/handler';
import { takeImportSlot } from '../../commands/customer-import/slot';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { WEBHOOK_DELIVERIES, type WebhookDeliveryDoc } from '../../projections/webhook-deliveries';
import { loadSubject } from '../../src/audit/history';
import { verifyLog } from '../../src/cli/audit-commands';
import { AliasedDocumentStore } from '../../src/projection/versions';
import { runCli } from '../helpers/cli-process';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  formFields,
  oauthBootstrap,
  type PageResponse,
  pageText,
  pkce,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver';

const FRONT = 'couvert_pk_front_desk_gaps_0123456789abcdefghijk';
const MANAGER = 'manager@demo.test';

interface Ctx {
  svc: TestService;
  rx: Receiver;
  dataDir: string;
  b: Browser;
  actor: string;
  /** Streams or ids whose events the manager's actions appended, for the audit test. */
  acted: { id: string; types: string[] }[];
}
const t = suite<Ctx>('dashboard gaps over HTTP', { acted: [] } as unknown as Ctx);

const ENV = { ROLES: 'api,projector,webhooks', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TEST_CLOCK: 'true' };

function bootstrap(rx: Receiver) {
  const b = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(b.restaurants[0] as object, {
    customer_matching: true,
    api_keys: [
      {
        id: 'key_front',
        name: 'Front desk',
        token: FRONT,
        scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'],
      },
    ],
    webhook_endpoints: [
      {
        id: 'we_legacy_gaps',
        url: rx.url('/legacy'),
        api_version: 'legacy',
        secret: 'whsec_legacy_gaps_secret_0000001',
        api_key_id: 'key_front',
      },
    ],
  });
  return b;
}

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  ctx.dataDir = mkdtempSync(join(tmpdir(), 'couvert-gaps-'));
  ctx.svc = await startTestService({ bootstrap: bootstrap(ctx.rx), dataDir: ctx.dataDir, env: ENV });
  ctx.b = new Browser(ctx.svc.url);
  const first = await ctx.b.get('/dashboard/api-keys?restaurant=rest_demo');
  assert.is(first.status, 303);
  const signed = await signIn(ctx.b, await ctx.b.get(first.location as string), MANAGER);
  assert.is(signed.status, 303);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
  await ctx.rx?.close();
  rmSync(ctx.dataDir, { recursive: true, force: true });
});

const within = async <T>(what: string, check: () => Promise<T | null | undefined | false>, ms = 120_000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

const csrfOf = (page: PageResponse, action: string) => formFields(page.text, action).csrf_token as string;
const advance = (svc: TestService, seconds: number) =>
  svc.api('POST', '/__test/clock', { body: { advance_seconds: seconds } });
const usageEvents = async (svc: TestService, keyId: string) =>
  svc.rt.events.readStream(apiKeyUsageStream(keyId));
const text = pageText;

/** An OAuth token of Demo POS at Le Demo (through the consent pages). */
async function connectDemoPos(svc: TestService): Promise<{ token: string; keyId: string }> {
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ challenge, scope: 'CATALOG_READ WEBHOOKS_WRITE' }),
    restaurant: 'rest_demo',
  });
  const res = await tokenRequest(svc.url, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') as string,
    redirect_uri: CALLBACK,
    code_verifier: verifier,
  });
  assert.is(res.status, 200, res.text);
  const me = await svc.api('GET', '/me', { token: res.body.access_token });
  return {
    token: res.body.access_token,
    keyId: me.body.data.credential?.id ?? me.body.data.api_key?.id ?? '',
  };
}

t(
  'last used: recorded once an hour per key off the request path, shown, listed, kept over a restart',
  async (ctx) => {
    const { svc, b } = ctx;
    let page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    assert.is(page.status, 200);
    assert.match(text(page.text), /Front desk[\s\S]*Last used Never/);
    assert.match(page.text, /at most once an hour/);
    for (let i = 0; i < 20; i++) assert.is((await svc.api('GET', '/me', { token: FRONT })).status, 200);
    await within('the use to be recorded', async () => (await usageEvents(svc, 'key_front')).length === 1);
    let uses = await usageEvents(svc, 'key_front');
    assert.is(uses[0]?.type, 'ApiKeyUsed');
    assert.is(uses[0]?.metadata.actor, 'credential:key_front');
    assert.is(uses[0]?.metadata.restaurant_id, 'rest_demo');
    const firstAt = (uses[0]?.data as { at: string } | undefined)?.at as string;
    page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
    assert.not.match(text(page.text), /Front desk[\s\S]*Last used Never/);
    // Within the hour: nothing more is appended, however many requests.
    await advance(svc, 30 * 60);
    for (let i = 0; i < 5; i++) await svc.api('GET', '/me', { token: FRONT });
    // A fixed wait on purpose: a use not recorded leaves no trace to wait for (the choice is made in
    // the request, the append would come after it, in setImmediate, src/http/key-usage.ts).
    await new Promise((r) => setTimeout(r, 200));
    assert.is((await usageEvents(svc, 'key_front')).length, 1);
    // An hour after the recorded use: the next request records again.
    await advance(svc, 31 * 60);
    await svc.api('GET', '/me', { token: FRONT });
    await within('the second use', async () => (await usageEvents(svc, 'key_front')).length === 2);
    uses = await usageEvents(svc, 'key_front');
    const secondAt = (uses[1]?.data as { at: string } | undefined)?.at as string;
    assert.ok(Date.parse(secondAt) - Date.parse(firstAt) >= 60 * 60 * 1000);
    // A refused request (a revoked or unknown token) records nothing.
    await svc.api('GET', '/me', { token: `${FRONT}x` });
    // An OAuth token's use shows on Connected applications.
    const app = await connectDemoPos(svc);
    await svc.api('GET', '/me', { token: app.token });
    await within('the token use', async () => {
      const apps = await b.get('/dashboard?restaurant=rest_demo');
      return /last used \d+ \w+ \d{4}/.test(apps.text) && apps;
    });
    // Operators see it too.
    const cli = await runCli(svc, ['keys', 'list', '--restaurant', 'rest_demo']);
    assert.is(cli.code, 0, cli.stderr);
    const line = cli.stdout.split('\n').find((l) => l.startsWith('key_front\t')) as string;
    assert.ok(line, cli.stdout);
    assert.is(line.split('\t')[5], secondAt);
    // An upload waiting for confirmation lives in the server's memory: a restart forgets it, and says so.
    const waiting = await upload(b, 'name\nAfter Restart\n', 'waiting.csv');
    // A restart rebuilds the read models from the log: "last used" is still there.
    await svc.close({ keepData: true });
    ctx.svc = await startTestService({ dataDir: ctx.dataDir, env: ENV });
    ctx.b = new Browser(ctx.svc.url);
    const again = await ctx.b.get('/dashboard/api-keys?restaurant=rest_demo');
    await signIn(ctx.b, await ctx.b.get(again.location as string), MANAGER);
    // Signed in again (sessions are in memory too), with the upload id the preview gave before.
    const fresh = await ctx.b.get('/dashboard/import?restaurant=rest_demo');
    const gone = await ctx.b.post('/dashboard/import/start', {
      ...formFields(waiting, '/dashboard/import/start'),
      csrf_token: csrfOf(fresh, '/dashboard/import/upload'),
    });
    assert.is(gone.status, 400);
    assert.match(text(gone.text), /a restart of the server forgets it\. Upload the file again/);
    const key = await ctx.svc.rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: 'key_front' });
    assert.is(key?.last_used_at, secondAt);
    page = await ctx.b.get('/dashboard/api-keys?restaurant=rest_demo');
    assert.match(text(page.text), /Front desk[\s\S]*Last used \d+ \w+ \d{4}/);
    ctx.acted.push({ id: app.keyId, types: [] });
    (ctx as unknown as { app: typeof app }).app = app;
  },
);

t(
  'deliveries: every attempt keeps a bounded, escaped excerpt of the answer; a long one is folded',
  async (ctx) => {
    const { svc, rx, b } = ctx;
    let signature = '';
    rx.on('/echo', {
      statuses: [500, 200],
      body: (req) => {
        signature = String(req.headers['service-signature'] ?? '');
        return `<b>bad</b>\r\n\u0007echo: ${signature}\n${'x'.repeat(700)}`;
      },
    });
    const list = await b.get('/dashboard/webhooks?restaurant=rest_demo');
    const made = await b.post('/dashboard/webhooks/create', {
      ...formFields(list.text, '/dashboard/webhooks/create'),
      url: rx.url('/echo'),
      description: 'Echo',
      events_mode: 'all',
      headers: '',
      key_id: 'key_front',
    });
    assert.is(made.status, 303, made.text.slice(0, 500));
    const endpointPath = (made.location as string).split('?')[0] as string;
    const endpointId = endpointPath.split('/')[3] as string;
    const created = await svc.api('POST', '/customers', { token: FRONT, body: { name: 'Echo Customer' } });
    assert.is(created.status, 201);
    await rx.waitFor('/echo', 1);
    const delivery = await within('the first attempt recorded', async () => {
      const docs = await svc.rt.docs
        .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
        .find({ endpoint_id: endpointId });
      return docs[0]?.attempts.length ? docs[0] : null;
    });
    const attempt = delivery.attempts[0];
    assert.is(attempt?.status_code, 500);
    const excerpt = attempt?.response_excerpt as string;
    assert.ok([...excerpt].length <= 512);
    assert.ok(attempt?.response_truncated);
    assert.match(excerpt, /^<b>bad<\/b>\u240d\n\u2407echo: t=\d+,v1=\[redacted\]/);
    const v1 = signature.split('v1=')[1] as string;
    assert.ok(v1.length === 64 && !excerpt.includes(v1), 'the echoed signature is not kept');
    // The page shows it escaped and folded (it is long).
    const page = await b.get(`${endpointPath}?restaurant=rest_demo`);
    assert.match(
      page.text,
      /<details class="answer"><summary>Answer \(512 characters, cut\)<\/summary><pre class="excerpt" aria-label="Answer to attempt 1">&lt;b&gt;bad&lt;\/b&gt;␍\n␇echo: t=\d+,v1=\[redacted\]/,
    );
    assert.not.match(page.text, /<b>bad<\/b>/);
    assert.not.ok(page.text.includes(v1));
    // Every attempt: the retry (answered 200 "…") keeps its own excerpt; a short one is shown unfolded.
    rx.on('/echo', { statuses: [200], body: () => 'thanks' });
    await advance(svc, 120);
    const done = await within(
      'the retry',
      async () => {
        const d = await svc.rt.docs
          .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
          .findOne({ _id: delivery._id });
        return d?.status === 'succeeded' ? d : null;
      },
      15_000,
    );
    assert.is(done.attempts.length, 2);
    assert.is(done.attempts[1]?.response_excerpt, 'thanks');
    assert.is(done.attempts[1]?.response_truncated, false);
    const after = await b.get(`${endpointPath}?restaurant=rest_demo`);
    assert.match(after.text, /<pre class="excerpt" aria-label="Answer to attempt 2">thanks<\/pre>/);
    // A test delivery keeps its answer in the history too.
    const tested = await b.post(`/dashboard/webhooks/${endpointId}/test`, {
      ...formFields(after.text, `/dashboard/webhooks/${endpointId}/test`),
    });
    // Answered with a redirect to the page showing the outcome (read from the test's delivery): a
    // reload of that page sends no second test.
    assert.is(tested.status, 303, tested.text.slice(0, 300));
    const sentBefore = rx.for('/echo').length;
    for (let i = 0; i < 2; i++) {
      const shown = await b.get(tested.location as string);
      assert.match(shown.text, /Test delivery succeeded[\s\S]*<pre class="excerpt">thanks<\/pre>/);
    }
    assert.is(rx.for('/echo').length, sentBefore, 'reloading the outcome sends nothing');
    const testDoc = await within(
      'the test delivery',
      async () =>
        (
          await svc.rt.docs
            .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
            .find({ endpoint_id: endpointId, test: true })
        )[0],
    );
    assert.is(testDoc.attempts[0]?.response_excerpt, 'thanks');
    const tests = await svc.rt.docs
      .collection<WebhookDeliveryDoc>(WEBHOOK_DELIVERIES)
      .find({ endpoint_id: endpointId, test: true });
    assert.is(tests.length, 1, 'one test, however often its outcome is shown');
    (ctx as unknown as { endpointId: string; deliveryId: string; testId: string }).endpointId = endpointId;
    (ctx as unknown as { deliveryId: string }).deliveryId = delivery._id;
    (ctx as unknown as { testId: string }).testId = testDoc._id;
  },
);

/** Uploads a CSV through the page's multipart form; returns the preview page. */
async function upload(b: Browser, csv: string, name: string, restaurant = 'rest_demo') {
  const page = await b.get(`/dashboard/import?restaurant=${restaurant}`);
  const fields = formFields(page.text, '/dashboard/import/upload');
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('on_match', 'update');
  form.append('file', new Blob([csv], { type: 'text/csv' }), name);
  const res = await b.postMultipart('/dashboard/import/upload', form);
  // 303 to the preview page (Post/Redirect/Get).
  assert.is(res.status, 303, res.text.slice(0, 800));
  const shown = await b.followed(res);
  assert.is(shown.status, 200, shown.text.slice(0, 800));
  return shown.text;
}

t(
  'import: the history lists each job (file, who, when, counts, summary); one import at a time',
  async (ctx) => {
    const { b } = ctx;
    const svc = ctx.svc;
    const main = await b.get('/dashboard/import?restaurant=rest_demo');
    assert.match(main.text, /after a restart of the server upload the file again/);
    const preview = await upload(
      b,
      'name,email\nAda Import,ada@example.test\n,broken@example.test\n',
      'first.csv',
    );
    const start = await b.post('/dashboard/import/start', formFields(preview, '/dashboard/import/start'));
    assert.is(start.status, 303);
    const jobId = (start.location as string).split('/jobs/')[1]?.split('?')[0] as string;
    await within('the import to finish', async () => {
      const p = await b.get(start.location as string);
      return p.text.includes('Import finished') && p;
    });
    const history = await within('the history line', async () => {
      const p = await b.get('/dashboard/import?restaurant=rest_demo');
      return p.text.includes('first.csv') && p;
    });
    const line = text(history.text);
    assert.match(line, /Import history first\.csv Finished/);
    assert.match(line, new RegExp(`by ${MANAGER.replace('.', '\\.')} · 2 of 2 rows`));
    assert.match(line, /1 created · 0 updated · 0 unchanged · 1 skipped/);
    assert.match(
      history.text,
      new RegExp(`href="/dashboard/import/jobs/${jobId}/summary.csv\\?restaurant=rest_demo" download`),
    );
    const summary = await b.get(`/dashboard/import/jobs/${jobId}/summary.csv?restaurant=rest_demo`);
    assert.is(summary.status, 200);
    assert.match(summary.text, /^row,outcome/);
    ctx.acted.push({ id: jobId, types: ['CustomerImportStarted', 'CustomerImportFinished'] });
    // The customer it created: its events name the manager too (and are marked to publish no webhook).
    const customerId = summary.text.split('\n')[1]?.split(',')[2] as string;
    assert.match(customerId, /^cus_/);
    ctx.acted.push({ id: customerId, types: ['CustomerCreated'] });

    // Another import running for the restaurant (another manager, or the CLI): a second one is refused.
    const meta = { actor: 'operator:cli', restaurant_id: 'rest_demo' };
    await takeImportSlot(svc.rt, { jobId: 'imp_elsewhere', restaurantId: 'rest_demo' }, meta);
    await startImportJob(
      svc.rt,
      {
        jobId: 'imp_elsewhere',
        restaurantId: 'rest_demo',
        fileName: 'big.csv',
        fileSha256: 'f'.repeat(64),
        rowCount: 100_000,
        onMatch: 'return_existing',
        columns: ['name'],
        actor: 'operator:cli',
      },
      meta,
    );
    const second = await upload(b, 'name\nBea Import\n', 'second.csv');
    const refused = await b.post('/dashboard/import/start', formFields(second, '/dashboard/import/start'));
    assert.is(refused.status, 409);
    assert.match(
      text(refused.text),
      /An import is already running for this restaurant \(big\.csv, 0 of 100,000 rows done\)/,
    );
    const listed = await b.get('/dashboard/import?restaurant=rest_demo');
    assert.match(text(listed.text), /big\.csv Importing .* by an operator \(command line\)/);
    // Two starts at once elsewhere: exactly one gets the slot (the write side decides).
    const both = await Promise.allSettled([
      takeImportSlot(svc.rt, { jobId: 'imp_a', restaurantId: 'rest_three' }, meta),
      takeImportSlot(svc.rt, { jobId: 'imp_b', restaurantId: 'rest_three' }, meta),
    ]);
    assert.equal(both.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    // The other import's process died: ten minutes of silence free the slot, and the history says so.
    await advance(svc, 11 * 60);
    const stale = await b.get('/dashboard/import?restaurant=rest_demo');
    assert.match(text(stale.text), /big\.csv Stopped/);
    // Its progress page says so too, instead of "Importing…" refreshing itself for good.
    const progress = await b.get('/dashboard/import/jobs/imp_elsewhere?restaurant=rest_demo');
    assert.match(progress.text, /<title>Import stopped/);
    assert.match(text(progress.text), /nothing has been recorded since/);
    assert.not.match(progress.text, /http-equiv="refresh"/);
    const third = await upload(b, 'name\nBea Import\n', 'third.csv');
    const ok = await b.post('/dashboard/import/start', formFields(third, '/dashboard/import/start'));
    assert.is(ok.status, 303);
  },
);

t('audit: every dashboard action appends events naming the manager', async (ctx) => {
  const { svc, b } = ctx;
  const extra = ctx as unknown as {
    app: { token: string; keyId: string };
    endpointId: string;
    deliveryId: string;
    testId: string;
  };
  // API keys: create, revoke.
  let page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
  const made = await b.post('/dashboard/api-keys/create', {
    ...formFields(page.text, '/dashboard/api-keys/create'),
    name: 'Audited key',
    scopes: 'CATALOG_READ',
  });
  assert.is(made.status, 303);
  const keys = await svc.rt.docs.collection<ApiKeyDoc>(API_KEYS).find({ name: 'Audited key' });
  const keyId = keys[0]?._id as string;
  page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
  const csrf = csrfOf(page, '/dashboard/api-keys/create');
  const revoked = await b.post('/dashboard/api-keys/revoke', {
    csrf_token: csrf,
    restaurant_id: 'rest_demo',
    key_id: keyId,
    confirm: 'yes',
  });
  assert.is(revoked.status, 303);
  // Webhooks: edit, disable, enable, rotate, migrate, resend, delete (create and test were done above).
  const ep = extra.endpointId;
  const act = (id: string, action: string, form: Record<string, string> = {}) =>
    b.post(`/dashboard/webhooks/${id}/${action}`, { csrf_token: csrf, restaurant_id: 'rest_demo', ...form });
  assert.is(
    (
      await act(ep, 'edit', {
        url: ctx.rx.url('/echo'),
        description: 'Edited',
        events_mode: 'all',
        headers: '',
      })
    ).status,
    303,
  );
  assert.is((await act(ep, 'toggle')).status, 303);
  assert.is((await act(ep, 'toggle')).status, 303);
  assert.is((await act(ep, 'rotate', { confirm: 'yes' })).status, 303);
  assert.is((await act('we_legacy_gaps', 'migrate', { confirm: 'yes' })).status, 303);
  const resent = await b.post(`/dashboard/webhooks/${ep}/deliveries/${extra.deliveryId}/resend`, {
    csrf_token: csrf,
    restaurant_id: 'rest_demo',
  });
  assert.is(resent.status, 303);
  // An endpoint of the OAuth application, then Disconnect: its tokens are revoked, its endpoint deleted.
  const appEndpoint = await svc.api('POST', '/webhook-endpoints', {
    token: extra.app.token,
    body: { url: ctx.rx.url('/app') },
  });
  assert.is(appEndpoint.status, 201, appEndpoint.text);
  const appEndpointId = appEndpoint.body.data.id as string;
  const apps = await b.get('/dashboard?restaurant=rest_demo');
  const disconnected = await b.post('/dashboard/applications/disconnect', {
    ...formFields(apps.text, '/dashboard/applications/disconnect'),
    client_id: 'app_demo',
    confirm: 'yes',
  });
  assert.is(disconnected.status, 303);
  await within('the application endpoint deleted', async () =>
    (await svc.rt.events.readStream(`webhook-endpoint-${appEndpointId}`)).some(
      (e) => e.type === 'WebhookEndpointDeleted',
    ),
  );
  assert.is((await act(ep, 'delete', { confirm: 'yes' })).status, 303);

  const expect: [string, string[]][] = [
    [keyId, ['ApiKeyCreated', 'ApiKeyRevoked']],
    [
      ep,
      [
        'WebhookEndpointCreated',
        'WebhookEndpointUpdated',
        'WebhookEndpointSecretRotated',
        'WebhookEndpointDeleted',
      ],
    ],
    ['we_legacy_gaps', ['WebhookEndpointMigrated']],
    [extra.testId, ['WebhookTestDeliverySent']],
    [extra.deliveryId, ['WebhookAttemptRequested']],
    [extra.app.keyId, ['ApiKeyRevoked']],
    [appEndpointId, ['WebhookEndpointDeleted']],
    ...ctx.acted.filter((a) => a.types.length).map((a) => [a.id, a.types] as [string, string[]]),
  ];
  let actor: string | null = null;
  for (const [id, types] of expect) {
    const { events } = await loadSubject(svc.rt.events, id);
    for (const type of types) {
      const found = events.filter((e) => e.type === type && String(e.metadata.actor).startsWith('user:'));
      assert.ok(
        found.length > 0,
        `${id}: a ${type} by a user (found ${events.map((e) => `${e.type}/${e.metadata.actor}`).join(', ')})`,
      );
      for (const e of found) {
        actor ??= String(e.metadata.actor);
        assert.is(e.metadata.actor, actor, `${id} ${type}: the same manager`);
      }
    }
  }
  // The import's customers and its slot name the manager as well.
  const importId = ctx.acted.find((a) => a.types.includes('CustomerImportStarted'))?.id as string;
  const slot = await svc.rt.events.readStream('customer-import-slot-rest_demo');
  assert.is(slot.find((e) => (e.data as { job_id: string }).job_id === importId)?.metadata.actor, actor);
  // What an auditor runs.
  const cli = await runCli(svc, ['audit', 'history', ep]);
  assert.is(cli.code, 0, cli.stderr);
  for (const type of ['WebhookEndpointCreated', 'WebhookEndpointSecretRotated', 'WebhookEndpointDeleted'])
    assert.match(
      cli.stdout,
      new RegExp(`${type}[^\\n]*${(actor as string).replace(':', ':')}|${actor as string}[^\\n]*${type}`),
    );
});

t('audit verify: sessions and flash are not read models, and the raw store is compared', async (ctx) => {
  const { svc } = ctx;
  await svc.rt.projections.catchUp();
  const report = await verifyLog(svc.rt, { chain: false, readModels: true });
  assert.ok(report.readModels);
  assert.not.ok(report.readModels?.collections.includes('web_sessions'));
  assert.equal(report.readModels?.differences, []);
  // The alias a query reads through may point elsewhere (a versioned projection taking over): verify
  // compares what the projections wrote, in the raw store.
  const misleading = new AliasedDocumentStore(svc.rt.projections.docs);
  misleading.setAliases({ api_keys: 'nothing_here', customer_imports: 'nothing_here' });
  const raw = await verifyLog({ ...svc.rt, docs: misleading }, { chain: false, readModels: true });
  assert.equal(raw.readModels?.differences, []);
});

t.run();
