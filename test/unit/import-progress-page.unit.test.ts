// The import progress page's markup without JavaScript, rendered directly: while an import runs it
// refreshes itself only inside <noscript> (with JavaScript, assets/import-progress.js updates it in
// place instead of reloading it, which sent a screen reader back to the top every 2 seconds), says so
// with a visible way to stop it (WCAG 2.2.1: the user can turn the time limit off), and ?refresh=off
// leaves the refresh out and offers a Refresh link instead. The browser test covers the update in place.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { type ImportJobState, initialImportJob } from '../../commands/customer-import/state';
import type { ShellContext } from '../../src/web/pages/dashboard-shell';
import { jobPage } from '../../src/web/pages/import-pages';

const t = suite('import progress page: refresh without JavaScript, and a way to stop it');

const shell: ShellContext = {
  restaurants: [{ id: 'rest_demo', name: 'Le Demo' }] as ShellContext['restaurants'],
  restaurant: { id: 'rest_demo', name: 'Le Demo', timezone: 'Europe/Paris' } as ShellContext['restaurant'],
  account: { email: 'manager@demo.test', csrf: 'csrf' },
};

const running: ImportJobState = {
  ...initialImportJob,
  status: 'running',
  jobId: 'imp_1',
  restaurantId: 'rest_demo',
  fileName: 'guests.csv',
  rowCount: 600,
  processed: 120,
  counts: { created: 120, updated: 0, matched: 0, skipped: 0 },
  startedAt: '2026-11-28T04:00:00.000Z',
  lastEventAt: '2026-11-28T04:00:10.000Z',
};

const head = (page: string) => page.slice(0, page.indexOf('</head>'));
const JOB = '/dashboard/import/jobs/imp_1?restaurant=rest_demo';

t('running: the refresh is only for a browser without JavaScript, and the page says how to stop it', () => {
  const page = jobPage(shell, { id: 'imp_1', state: running });
  assert.match(head(page), /<noscript><meta http-equiv="refresh" content="2"><\/noscript>/);
  assert.not.match(head(page).replace(/<noscript>.*?<\/noscript>/s, ''), /http-equiv="refresh"/);
  assert.match(head(page), /<script src="\/assets\/import-progress\.js" defer><\/script>/);
  assert.match(page, /<p[^>]* role="status"[^>]*>/);
  assert.ok(
    page.includes(`<a href="${JOB.replace(/&/g, '&amp;')}&amp;refresh=off">Stop refreshing</a>`),
    page,
  );
  assert.match(page, /data-poll="/);
});

t('?refresh=off: no refresh, no polling, a Refresh link instead', () => {
  const page = jobPage(shell, { id: 'imp_1', state: running, refresh: false });
  assert.not.match(page, /http-equiv="refresh"/);
  assert.not.match(page, /data-poll=/);
  assert.not.match(page, /Stop refreshing/);
  assert.ok(page.includes(`<a href="${JOB}&amp;refresh=off">Refresh</a>`), page);
});

t('finished: no refresh, no script, no refresh links', () => {
  const page = jobPage(shell, {
    id: 'imp_1',
    state: { ...running, status: 'finished', processed: 600, endedAt: '2026-11-28T04:01:00.000Z' },
  });
  assert.not.match(page, /http-equiv="refresh"/);
  assert.not.match(page, /import-progress\.js/);
  assert.not.match(page, /Stop refreshing|>Refresh</);
});

t.run();
