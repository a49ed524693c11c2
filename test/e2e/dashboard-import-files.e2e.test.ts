// The customer import page with awkward and hostile files, over HTTP as a browser without JavaScript
// sends them: each is either previewed with its rows' errors or refused with one clear sentence on the
// import page (400), never a 500 or a stack trace.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, formFields, oauthBootstrap, pageText, signIn } from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('dashboard import: awkward files', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, { customer_matching: true });
  ctx.svc = await startTestService({ bootstrap });
  ctx.b = new Browser(ctx.svc.url);
  const first = await ctx.b.get('/dashboard/import?restaurant=rest_demo');
  assert.is((await signIn(ctx.b, await ctx.b.get(first.location as string), 'solo@demo.test')).status, 303);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const text = pageText;

/**
 * Uploads a file as the page does. The POST answers 303 (Post/Redirect/Get): to the preview page, or to
 * the import page saying why the file was refused; `html` is that page, as the browser follows.
 */
async function upload(
  b: Browser,
  data: string | Uint8Array,
): Promise<{ status: number; location: string | null; html: string }> {
  const page = await b.get('/dashboard/import?restaurant=rest_demo');
  const form = new FormData();
  for (const [k, v] of Object.entries(formFields(page.text, '/dashboard/import/upload'))) form.append(k, v);
  form.append('file', new Blob([data], { type: 'text/csv' }), 'guests.csv');
  const res = await b.postMultipart('/dashboard/import/upload', form);
  const shown = await b.followed(res);
  assert.is(shown.status, 200, shown.text.slice(0, 300));
  return { status: res.status, location: res.location, html: shown.text };
}
const REFUSED_TO = '/dashboard/import?restaurant=rest_demo';

/**
 * The job's page once it says the import finished. A test that starts an import waits for it: the
 * restaurant's import slot is held until then, and the next test's start would be refused (409).
 */
async function finished(b: Browser, jobPage: string) {
  const end = Date.now() + 120_000;
  for (;;) {
    const p = await b.get(jobPage);
    if (p.text.includes('Import finished')) return p;
    if (Date.now() > end) throw new Error('the import did not finish');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The import page's alert, as read. */
const alertOf = (html: string) =>
  text(/<div class="alert" role="alert">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '');

t('a file that cannot be read is refused with one clear sentence, said once', async ({ b }) => {
  const cases: [string | Uint8Array, RegExp][] = [
    [
      'name,note\n=HYPERLINK("http://x.example"),a\n',
      /near line 2: a quote inside a field that does not start/,
    ],
    ['name\nJo "JJ" Smith\n', /near line 2: a quote inside a field/],
    ['name,note\nA,"never closed\n', /a quoted field is never closed/],
    ['\n  \r\n', /^ ?The file is empty/i],
    [new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x43, 0x61, 0x66, 0xe9, 0x0a]), /not UTF-8 text/],
    ['name,nickname,,name\nA,B,C,D\n', /"nickname" is not a customer field/],
  ];
  for (const [file, expected] of cases) {
    const { status, location, html } = await upload(b, file);
    assert.is(status, 303, `${String(file).slice(0, 40)}: ${status} ${html.slice(0, 300)}`);
    assert.is(location, REFUSED_TO);
    const alert = alertOf(html);
    assert.match(alert, expected);
    // The reason is not repeated ("the file is empty: …: the file is empty: …").
    const first = alert.trim().slice(0, 30);
    assert.is(alert.split(first).length - 1, 1, `said once: ${alert}`);
    assert.not.match(html, /\bat \w+ \(|Error:|stack/i);
  }
});

t(
  'a refused upload keeps the choice of what a matching row does (it fell back to the default)',
  async ({ b }) => {
    const checkedChoice = (html: string) =>
      /<input type="radio" id="up-(\w+)" name="on_match" value="\w+" checked>/.exec(html)?.[1];
    const page = await b.get('/dashboard/import?restaurant=rest_demo');
    assert.is(checkedChoice(page.text), 'return_existing');
    for (const file of [
      new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x43, 0x61, 0x66, 0xe9, 0x0a]),
      'name\n',
    ]) {
      const form = new FormData();
      for (const [k, v] of Object.entries(formFields(page.text, '/dashboard/import/upload')))
        form.append(k, v);
      form.append('on_match', 'create_new');
      form.append('file', new Blob([file], { type: 'text/csv' }), 'guests.csv');
      const res = await b.postMultipart('/dashboard/import/upload', form);
      assert.is(res.status, 303);
      const shown = await b.followed(res);
      assert.is(shown.status, 200);
      assert.ok(alertOf(shown.text), 'refused');
      assert.is(checkedChoice(shown.text), 'create_new');
    }
    // A value the page never writes is refused, naming the values it takes.
    const odd = await b.get('/dashboard/import?restaurant=rest_demo&on_match=merge');
    assert.is(odd.status, 400);
  },
);

t(
  'a header of many bad columns, or of a very long one, is refused in a sentence of bounded size',
  async ({ b }) => {
    // 20,000 unknown columns: the first five said, the others counted (it was a 3 MB alert).
    const many = `name,${Array.from({ length: 20_000 }, (_, i) => `col${i}`).join(',')}\nA\n`;
    const wide = await upload(b, many);
    assert.is(wide.location, REFUSED_TO);
    const alert = alertOf(wide.html);
    assert.match(alert, /^The header row cannot be imported: "col0" is not a customer field/);
    assert.match(alert, /"col4" is not a customer field/);
    assert.not.match(alert, /"col5"/);
    assert.match(alert, /; and 19,995 more\.$/);
    assert.ok(alert.length < 2_000, `${alert.length} characters`);
    // One header cell of 200,000 characters: quoted by its first 59 and an ellipsis.
    const long = await upload(b, `name,${'x'.repeat(200_000)}\nA,b\n`);
    assert.is(
      alertOf(long.html),
      `The header row cannot be imported: "${'x'.repeat(59)}…" is not a customer field (name, email, phone_number, lang, external_id, tags, note, newsletter_consent) nor a custom field (its name, or cf:&lt;field id&gt;).`,
    );
    assert.ok(long.html.length < 20_000, `${long.html.length} bytes of page`);
  },
);

t('rows with mixed line endings, quotes and a wrong cell count are previewed row by row', async ({ b }) => {
  const { status, html } = await upload(
    b,
    '\uFEFFname,email\r\nAda,ada@example.test\nBob,bob@example.test\r\n"Cy\nDee","cy@example.test"\nEve\n',
  );
  assert.is(status, 303, html.slice(0, 500));
  const page = text(html);
  assert.match(page, /4 rows · columns: name, email/);
  assert.match(page, /row: the row has 1 cell, the header 2/);
});

t('a one-row file is previewed in the singular (it read "The first 1 rows have no error")', async ({ b }) => {
  const good = text((await upload(b, 'name,email\nSolo,solo@example.test\n')).html);
  assert.match(good, /The first row has no error\./);
  assert.match(good, /The first row, as it would be imported/);
  assert.not.match(good, /first 1 rows/);
  const bad = text((await upload(b, 'name,email\nSolo,not-an-email\n')).html);
  assert.match(bad, /The first row has errors: it is skipped by the import/);
  assert.not.match(bad, /first 1 rows/);
});

t('a double click on Import starts one import: every click lands on its progress page', async ({ b }) => {
  const { status, html } = await upload(b, 'name,email\nDouble Click,double-click@example.test\n');
  assert.is(status, 303);
  const form = formFields(html, '/dashboard/import/start');
  const [one, two] = await Promise.all([
    b.post('/dashboard/import/start', form),
    b.post('/dashboard/import/start', form),
  ]);
  const three = await b.post('/dashboard/import/start', form);
  for (const res of [one, two, three]) {
    assert.is(res.status, 303, res.text.slice(0, 400));
    assert.is(res.location, one.location);
  }
  const done = await finished(b, one.location as string);
  assert.match(text(done.text), /Created 1 Updated 0/);
  // One job in the history for this file (the other clicks started nothing).
  const history = await b.get('/dashboard/import?restaurant=rest_demo');
  assert.is(history.text.split('/summary.csv').length - 1, 1, 'one import in the history');
});

t('an upload replaced by a newer one of the same manager says so, not that it expired', async ({ b }) => {
  // One upload waits per manager: a second file (another tab, another restaurant) replaces the first.
  const first = await upload(b, 'name,email\nFirst Tab,first-tab@example.test\n');
  assert.is(first.status, 303);
  const second = await upload(b, 'name,email\nSecond Tab,second-tab@example.test\n');
  assert.is(second.status, 303);
  for (const action of ['/dashboard/import/start', '/dashboard/import/preview']) {
    const res = await b.post(action, formFields(first.html, action));
    assert.is(res.status, 400, res.text.slice(0, 300));
    const alert = alertOf(res.text);
    assert.match(alert, /You uploaded another file after this one/);
    assert.not.match(alert, /waits 30 minutes/);
  }
  // The first preview's page, reloaded, says so too.
  const reloaded = await b.get(first.location as string);
  assert.is(reloaded.status, 404);
  assert.match(alertOf(reloaded.text), /You uploaded another file after this one/);
  // The newer one is there and imports.
  const start = await b.post('/dashboard/import/start', formFields(second.html, '/dashboard/import/start'));
  assert.is(start.status, 303, start.text.slice(0, 300));
  assert.match(text((await finished(b, start.location as string)).text), /Created 1 Updated 0/);
});

t(
  'a reload of the preview or of a refusal uploads nothing again: the POST answers 303 to a GET page',
  async ({ b }) => {
    const { status, location, html } = await upload(
      b,
      'name,email\nReload Me,reload-me@example.test\nBad Row,not-an-email\n',
    );
    assert.is(status, 303);
    assert.match(location ?? '', /^\/dashboard\/import\/uploads\/[\w-]+\?restaurant=rest_demo$/);
    // The preview with its per-row errors and the Import form (CSRF token included).
    assert.match(text(html), /Reload Me/);
    assert.match(html, /class="row-error"/);
    // A skipped row says why once: "email must be an email address", not "email: email must be…".
    assert.match(text(html), /Skipped email must be an email address/);
    assert.not.match(text(html), /email: email/);
    const start = formFields(html, '/dashboard/import/start');
    assert.ok(start.csrf_token && start.upload_id);
    // A reload is a GET of that page: the same upload, nothing sent again, nothing replaced.
    for (let i = 0; i < 2; i++) {
      const again = await b.get(location as string);
      assert.is(again.status, 200);
      assert.equal(formFields(again.text, '/dashboard/import/start'), start);
    }
    // Preview again with another on_match: 303 to the same page for that choice; its reload too.
    const re = await b.post('/dashboard/import/preview', {
      ...formFields(html, '/dashboard/import/preview'),
      on_match: 'update',
    });
    assert.is(re.status, 303, re.text.slice(0, 300));
    for (let i = 0; i < 2; i++) {
      const shown = await b.get(re.location as string);
      assert.is(shown.status, 200);
      assert.is(formFields(shown.text, '/dashboard/import/start').on_match, 'update');
      assert.is(formFields(shown.text, '/dashboard/import/start').upload_id, start.upload_id);
    }
    // A refused file: its sentence once on the import page; a reload shows the plain page.
    const refused = await upload(b, 'name,nickname\nA,B\n');
    assert.is(refused.location, REFUSED_TO);
    assert.match(alertOf(refused.html), /"nickname" is not a customer field/);
    const plain = await b.get(REFUSED_TO);
    assert.is(plain.status, 200);
    assert.is(alertOf(plain.text), '');
    // The waiting upload is still the one previewed: it imports.
    const go = await b.post('/dashboard/import/start', start);
    assert.is(go.status, 303, go.text.slice(0, 300));
    assert.match(go.location ?? '', /^\/dashboard\/import\/jobs\/imp_/);
    // Its preview's page, once the import started, is the job's page.
    const after = await b.get(location as string);
    assert.is(after.status, 303);
    assert.is(after.location, go.location);
  },
);

/** Files under the temporary directory, new since `before`, whose content holds `marker` (two levels deep). */
function leftovers(before: Set<string>, marker: string): string[] {
  const found: string[] = [];
  const look = (path: string, depth: number) => {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(path);
    } catch {
      return;
    }
    if (st.isDirectory() && depth < 2) {
      let names: string[] = [];
      try {
        names = readdirSync(path);
      } catch {
        return;
      }
      for (const n of names) look(join(path, n), depth + 1);
    } else if (st.isFile() && st.size < 1024 * 1024) {
      try {
        if (readFileSync(path, 'utf8').includes(marker)) found.push(path);
      } catch {}
    }
  };
  for (const name of readdirSync(tmpdir())) if (!before.has(name)) look(join(tmpdir(), name), 1);
  return found;
}

t(
  'an upload with two files, or a file under another name, is refused and leaves no file behind',
  async ({ b }) => {
    const before = new Set(readdirSync(tmpdir()));
    const marker = randomUUID();
    const page = await b.get('/dashboard/import?restaurant=rest_demo');
    const fields = formFields(page.text, '/dashboard/import/upload');
    const send = async (files: [string, string][]) => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      for (const [name, content] of files)
        form.append(name, new Blob([content], { type: 'text/csv' }), 'x.csv');
      const res = await b.postMultipart('/dashboard/import/upload', form);
      return { status: res.status, html: (await b.followed(res)).text };
    };
    const two = await send([
      ['file', `name\n${marker} one\n`],
      ['file', `name\n${marker} two\n`],
    ]);
    assert.is(two.status, 303, two.html.slice(0, 300));
    assert.match(text(two.html), /Choose one file/);
    const elsewhere = await send([['attachment', `name\n${marker} three\n`]]);
    assert.is(elsewhere.status, 303);
    assert.match(alertOf(elsewhere.html), /Choose a CSV file/);
    const both = await send([
      ['file', `name\n${marker} four\n`],
      ['attachment', `name\n${marker} five\n`],
    ]);
    assert.is(both.status, 303);
    // Removed after the answer: give a loaded machine time, then look.
    for (const until = Date.now() + 120_000; leftovers(before, marker).length > 0 && Date.now() < until; )
      await new Promise((r) => setTimeout(r, 100));
    assert.equal(leftovers(before, marker), []);
  },
);

t.run();
