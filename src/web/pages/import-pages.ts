// Customer import: upload a CSV, preview its first rows with each row's faults and outcomes, import
// with the on_match previewed (the preview page's Import form carries it; choosing another one
// previews again, by a form), follow the progress (the page refreshes itself while the import runs),
// and download the summary. No JavaScript anywhere.
import { ON_MATCH, type OnMatch, type RowResult } from '../../../commands/customer-import/events';
import type { ImportJobState } from '../../../commands/customer-import/state';
import type { CustomerImportDoc } from '../../../projections/customer-imports';
import type { Issue } from '../../core/errors';
import type { ImportPlan } from '../../customer-import/engine';
import { type Html, html, IMPORT_PROGRESS_SCRIPT } from '../html';
import { csrfField, dashboardPage, restaurantField, type ShellContext, when } from './dashboard-shell';

const ON_MATCH_WORDS: Record<OnMatch, { title: string; sub: string }> = {
  return_existing: {
    title: 'Keep the customer already there',
    sub: 'A row matching a customer (same external id, phone or email) changes nothing.',
  },
  update: {
    title: 'Update the customer already there',
    sub: 'A matching row fills in and replaces the values it gives; empty cells leave the customer as it is.',
  },
  create_new: {
    title: 'Always create a new customer',
    sub: 'No matching: every valid row is a new customer.',
  },
};

function onMatchChoice(selected: OnMatch, idPrefix: string): Html {
  return html`<fieldset>
<legend>When a row matches an existing customer</legend>
${ON_MATCH.map(
  (v) =>
    html`<label class="choice" for="${idPrefix}-${v}"><input type="radio" id="${idPrefix}-${v}" name="on_match" value="${v}"${v === selected ? html` checked` : ''}><span><span>${ON_MATCH_WORDS[v].title}</span><span class="sub">${ON_MATCH_WORDS[v].sub}</span></span></label>`,
)}
</fieldset>`;
}

export interface ImportLine {
  doc: CustomerImportDoc;
  /** Who started it, in words (an email, "an operator"). */
  who: string;
  /** Running but silent past the stale limit: its process stopped. */
  stopped: boolean;
}

const STATUS: Record<ImportJobState['status'], string> = {
  none: 'Starting',
  running: 'Importing',
  finished: 'Finished',
  failed: 'Stopped',
};

const jobPath = (id: string, restaurantId: string) =>
  `/dashboard/import/jobs/${encodeURIComponent(id)}?restaurant=${encodeURIComponent(restaurantId)}`;
const summaryPath = (id: string, restaurantId: string) =>
  `/dashboard/import/jobs/${encodeURIComponent(id)}/summary.csv?restaurant=${encodeURIComponent(restaurantId)}`;

function history(c: ShellContext, jobs: ImportLine[], total: number): Html | string {
  if (!jobs.length) return '';
  const tz = c.restaurant.timezone;
  const n = (v: number) => v.toLocaleString('en');
  return html`<section aria-labelledby="recent"><h2 id="recent" class="section-title">Import history</h2><ul class="items imports">${jobs.map(
    ({ doc: j, who, stopped }) => html`<li>
  <div class="item-head"><h3><a href="${jobPath(j._id, c.restaurant.id)}">${j.file_name}</a></h3><span class="badge${j.status === 'failed' || stopped ? ' warn' : j.status === 'finished' ? ' on' : ''}">${stopped ? 'Stopped' : STATUS[j.status]}</span></div>
  <p class="small">${when(j.started_at, tz)} · by ${who} · ${n(j.processed + (j.written_after ?? 0))} of ${n(j.row_count)} rows</p>
  <p class="counts-line"><strong>${n(j.counts.created)}</strong> created · <strong>${n(j.counts.updated)}</strong> updated · <strong>${n(j.counts.matched)}</strong> unchanged · <strong>${n(j.counts.skipped)}</strong> skipped</p>
  <p class="small"><a class="tap" href="${summaryPath(j._id, c.restaurant.id)}" download>Summary (CSV)</a></p>
</li>`,
  )}</ul>${total > jobs.length ? html`<p class="small">The latest ${jobs.length} of ${n(total)} imports.</p>` : ''}</section>`;
}

/**
 * A skipped row's errors on the preview: each message once ("name is required"), the field put in
 * front only when the message does not start with it (the summary CSV keeps its "field: message").
 */
const rowIssues = (issues: readonly Issue[]): string =>
  issues
    .map((i) =>
      !i.path || i.message === i.path || i.message.startsWith(`${i.path} `)
        ? i.message
        : `${i.path}: ${i.message}`,
    )
    .join('; ');

export function importPage(
  c: ShellContext,
  o: { jobs: ImportLine[]; total: number; alert?: string | null; maxSize: string; onMatch?: OnMatch },
): string {
  const jobs = history(c, o.jobs, o.total);
  return dashboardPage(c, {
    section: 'import',
    title: 'Customer import',
    lead: html`Add or update the customers of <strong>${c.restaurant.name}</strong> from a CSV file. Imported changes appear in the partners' customer sync, but send no webhook.`,
    alert: o.alert,
    body: html`<section class="card" aria-labelledby="upload">
<h2 id="upload">Upload a file</h2>
<form method="post" action="/dashboard/import/upload" enctype="multipart/form-data">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  <label for="file">CSV file</label>
  <input id="file" name="file" type="file" accept=".csv,text/csv" required aria-describedby="file-help">
  <div class="help" id="file-help"><p>UTF-8, with a header row. Columns: <code>name</code> (required), <code>email</code>, <code>phone_number</code> (national spellings are read with the restaurant's country), <code>lang</code>, <code>external_id</code>, <code>tags</code> (separated by <code>|</code>), <code>note</code>, <code>newsletter_consent</code>, and custom fields by name or as <code>cf:&lt;id&gt;</code>. Comma, semicolon or tab separated. At most ${o.maxSize}.</p></div>
  ${onMatchChoice(o.onMatch ?? 'return_existing', 'up')}
  <button type="submit" class="full">Preview</button>
</form>
<p class="small">The preview waits 30 minutes for you to start the import; it is kept in this server's memory, so after a restart of the server upload the file again. One import runs at a time for a restaurant.</p>
</section>
${jobs}`,
  });
}

/**
 * What the Import button does, in its words: the rows imported and those skipped ("Import 8 rows" when 3
 * of them are skipped promised more than it did). Only the first rows are previewed: past them the
 * rows skipped are those seen so far at least, and the rows imported at most the others.
 */
export function importButtonWords(rowCount: number, previewed: number, skipped: number): string {
  const rows = (n: number) => `${n.toLocaleString('en')} row${n === 1 ? '' : 's'}`;
  const imported = rowCount - skipped;
  if (skipped === 0) return `Import ${rows(rowCount)}`;
  return previewed >= rowCount
    ? `Import ${rows(imported)} (${skipped.toLocaleString('en')} skipped)`
    : `Import up to ${rows(imported)} (${skipped.toLocaleString('en')} or more skipped)`;
}

export function previewPage(
  c: ShellContext,
  o: { uploadId: string; fileName: string; columns: string[]; plan: ImportPlan; onMatch: OnMatch },
): string {
  const p = o.plan;
  const faulty = p.rows.filter((r) => r.outcome === 'skipped').length;
  // The preview holds the whole file and every row of it is skipped: there are no "other rows", and an
  // import would write nothing, so none is offered.
  const nothingToImport = faulty > 0 && faulty === p.row_count;
  const outcome: Record<string, string> = {
    created: 'New customer',
    updated: 'Updates a customer',
    matched: 'Already there',
    skipped: 'Skipped',
  };
  return dashboardPage(c, {
    section: 'import',
    title: 'Check the file',
    switcherAction: null,
    body: html`<p><a class="tap" href="/dashboard/import?restaurant=${c.restaurant.id}">← Choose another file</a></p>
<section class="card" aria-labelledby="file-title">
<h2 id="file-title">${o.fileName}</h2>
<p>${p.row_count.toLocaleString('en')} row${p.row_count === 1 ? '' : 's'} · columns: ${o.columns.join(', ')}</p>
<p id="preview-choice">A row that matches an existing customer: <strong>${ON_MATCH_WORDS[o.onMatch].title}</strong>. The results below are for this choice.</p>
<details class="rechoose"><summary>Change what a matching row does</summary>
<form method="post" action="/dashboard/import/preview">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  <input type="hidden" name="upload_id" value="${o.uploadId}">
  ${onMatchChoice(o.onMatch, 'again')}
  <button type="submit" class="secondary">Preview again</button>
</form>
</details>
${
  faulty
    ? html`<div class="alert" role="alert">${p.rows.length === 1 ? 'The first row has errors' : `${faulty} of the first ${p.rows.length} rows ${faulty === 1 ? 'has' : 'have'} errors`}: ${faulty === 1 ? 'it is' : 'they are'} skipped by the import${nothingToImport ? html`. No row of this file can be imported: fix it and upload it again.` : html` (the summary lists every skipped row). Fix the file and upload it again, or import the other rows.`}</div>`
    : html`<div class="notice" role="status">${p.rows.length === 1 ? 'The first row has' : `The first ${p.rows.length} rows have`} no error.</div>`
}
<div class="table-wrap"><table class="preview">
<caption>${p.rows.length === 1 ? 'The first row, as it would be' : `The first ${p.rows.length} rows, as they would be`} imported</caption>
<thead><tr><th scope="col">Row</th><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Phone</th><th scope="col">Result</th></tr></thead>
<tbody>${p.rows.map(
      (r) =>
        html`<tr${r.errors.length ? html` class="row-error"` : ''}><td data-label="Row">${r.row}</td><td data-label="Name">${r.input.name}</td><td data-label="Email">${r.input.email ?? ''}</td><td data-label="Phone">${r.input.phone_number ?? ''}</td><td data-label="Result"><div>${
          r.errors.length
            ? html`<strong>Skipped</strong><br><span class="small">${rowIssues(r.errors)}</span>`
            : html`${outcome[r.outcome]}${r.matched_on ? html`<br><span class="small">matched on ${r.matched_on}${r.matched_row ? ` (row ${r.matched_row})` : ''}</span>` : ''}`
        }</div></td></tr>`,
    )}</tbody>
</table></div>
</section>
<section class="card" aria-labelledby="go">
<h2 id="go">Import</h2>
${
  nothingToImport
    ? html`<p>Nothing to import: every row of ${o.fileName} has errors (see above). Fix the file, then choose it again.</p>`
    : html`<p id="go-choice">Rows that match an existing customer: <strong>${ON_MATCH_WORDS[o.onMatch].title}</strong>, as previewed above.</p>
<form method="post" action="/dashboard/import/start">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  <input type="hidden" name="upload_id" value="${o.uploadId}">
  <input type="hidden" name="on_match" value="${o.onMatch}">
  <button type="submit" class="full">${importButtonWords(p.row_count, p.rows.length, faulty)}</button>
</form>`
}
</section>`,
  });
}

export function jobPage(
  c: ShellContext,
  o: {
    id: string;
    state: ImportJobState;
    who?: string;
    /** Running but silent past the stale limit (its process stopped): the time of its last record. */
    stoppedSince?: string | null;
    /**
     * Once it has stopped (failed, or its process gone): the rows after the last recorded one that
     * were written all the same (src/customer-import/reconcile.ts); null while it runs or finished.
     */
    written?: RowResult[] | null;
    /** Offer the form that finishes it (stopped, and not being resumed in this process). */
    resumable?: boolean;
    /** Why a resume was refused. */
    alert?: string | null;
    /** Keep the page up to date while it runs (false: ?refresh=off, the manager stopped it). */
    refresh?: boolean;
  },
): string {
  const s = o.state;
  const stopped = s.status === 'running' && !!o.stoppedSince;
  const active = (s.status === 'running' && !stopped) || s.status === 'none';
  const written = o.written ?? [];
  // Failed because its server was stopping (engine.ts ImportInterrupted), not on an error.
  const interrupted = s.status === 'failed' && !!s.failure?.includes('(ImportInterrupted)');
  // What is done: the recorded rows and the rows written after them; the rest was not imported.
  const counts0 = { ...s.counts };
  for (const r of written) counts0[r.outcome]++;
  const done = s.processed + written.length;
  const notImported = o.written ? s.rowCount - done : 0;
  const pct = s.rowCount ? Math.floor((done / s.rowCount) * 100) : active ? 0 : 100;
  const n = (v: number) => v.toLocaleString('en');
  const counts = html`<dl class="facts counts">
  <div><dt>Created</dt><dd>${n(counts0.created)}</dd></div>
  <div><dt>Updated</dt><dd>${n(counts0.updated)}</dd></div>
  <div><dt>Unchanged</dt><dd>${n(counts0.matched)}</dd></div>
  <div><dt>Skipped</dt><dd>${n(counts0.skipped)}</dd></div>
  ${o.written ? html`<div><dt>Not imported</dt><dd>${n(notImported)}</dd></div>` : ''}
</dl>`;
  const refresh = active && o.refresh !== false;
  // The page without its refresh (the Stop link, the Refresh link, and what the script fetches).
  const still = `/dashboard/import/jobs/${encodeURIComponent(o.id)}?restaurant=${encodeURIComponent(c.restaurant.id)}&refresh=off`;
  const summary = `/dashboard/import/jobs/${encodeURIComponent(o.id)}/summary.csv?restaurant=${encodeURIComponent(c.restaurant.id)}`;
  // What a stopped import did and did not do, exactly (the summary has one line for every row).
  const what =
    done === 0
      ? 'No row was imported.'
      : `${n(done)} row${done === 1 ? ' is' : 's are'} done and ${n(notImported)} ${notImported === 1 ? 'is' : 'are'} not imported (the summary lists every row, those not imported as not_imported).`;
  const next = !o.resumable
    ? ''
    : done === 0
      ? 'To import the file, choose it again below.'
      : 'To import the others, finish the import below with the same file.';
  const finish = o.resumable
    ? html`<section class="card" aria-labelledby="finish"><h2 id="finish">Finish this import</h2>
<p>Choose the same file again (${s.fileName ?? 'its CSV file'}, unchanged). The import goes on where it stopped: the rows already done are recognised and not imported twice, and a row that matches a customer is handled as before (${ON_MATCH_WORDS[s.onMatch].title.toLowerCase()}).</p>
<form method="post" action="/dashboard/import/jobs/${encodeURIComponent(o.id)}/resume" enctype="multipart/form-data">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  <label for="file">CSV file</label>
  ${o.alert ? html`<div class="alert" role="alert" id="file-error">${o.alert}</div>` : ''}
  <input id="file" name="file" type="file" accept=".csv,text/csv" required${o.alert ? html` aria-invalid="true" aria-describedby="file-error"` : ''}>
  <button type="submit" class="full">Finish the import</button>
</form>
<p class="small">Or import only the rows marked not_imported in the summary, as a new file.</p></section>`
    : '';
  return dashboardPage(c, {
    section: 'import',
    title: active ? 'Importing…' : s.status === 'failed' || stopped ? 'Import stopped' : 'Import finished',
    switcherAction: null,
    // A refused resume is said next to the file it refused (in the Finish card), else at the top.
    alert: o.resumable ? null : o.alert,
    // A meta refresh reloads the page, sending a screen reader back to its top every time: only a
    // browser without JavaScript gets it (a <noscript> in <head> holds it then, and the Stop link turns
    // it off, WCAG 2.2.1); with JavaScript the script updates the page in place instead.
    head: refresh
      ? html`<noscript><meta http-equiv="refresh" content="2"></noscript>
<script src="${IMPORT_PROGRESS_SCRIPT}" defer></script>`
      : undefined,
    body: html`<p><a class="tap" href="/dashboard/import?restaurant=${c.restaurant.id}">← Customer import</a></p>
<section class="card" aria-labelledby="job-title"${active ? html` data-active` : ''}>
<h2 id="job-title">${s.fileName ?? o.id}</h2>
<label for="progress">${n(done)} of ${n(s.rowCount)} rows (${pct} %)</label>
<progress id="progress" max="100" value="${pct}">${pct} %</progress>
${counts}
${
  refresh
    ? html`<p class="small" role="status" id="import-status" data-refresh-note data-poll="${still}"><span data-intro>This page refreshes itself every 2 seconds. You can leave it: the import goes on.</span> <a href="${still}">Stop refreshing</a></p>`
    : active
      ? html`<p class="small" data-refresh-note>This page no longer refreshes itself. You can leave it: the import goes on. <a href="${still}">Refresh</a></p>`
      : ''
}
${stopped ? html`<div class="alert" role="alert">The import stopped: nothing has been recorded since ${when(o.stoppedSince, c.restaurant.timezone)} (the server importing it was restarted or stopped). ${what} ${next}</div>` : ''}
${s.status === 'failed' && interrupted ? html`<div class="alert" role="alert">The import stopped because the server importing it was stopped or restarted. ${what} ${next}</div>` : ''}
${s.status === 'failed' && !interrupted ? html`<div class="alert" role="alert">Couvert could not finish this import because of a problem on our side. ${what} ${next} If it stops again, contact support and quote the import id ${o.id}.</div>` : ''}
${s.status === 'finished' ? html`<div class="notice" role="status">Every row is done. The summary lists each row's result and, for a skipped row, why.</div>` : ''}
${s.status === 'none' ? '' : html`<p><a class="button" href="${summary}" download>Download the summary (CSV)</a></p>`}
${s.actor ? html`<p class="small">Started by ${o.who ?? s.actor}</p>` : ''}
<p class="small">Started ${when(s.startedAt, c.restaurant.timezone)}${s.endedAt ? ` · ended ${when(s.endedAt, c.restaurant.timezone)}` : ''} · when a row matches a customer: ${ON_MATCH_WORDS[s.onMatch].title.toLowerCase()}</p>
</section>
${finish}`,
  });
}
