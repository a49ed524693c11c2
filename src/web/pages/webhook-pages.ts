// Webhook endpoints of a restaurant (list, create, edit, disable, delete, rotate, test, migrate) and
// each endpoint's delivery history (30 days, filters, attempts, resend).

import { TEST_EVENT_TYPE } from '../../../commands/webhook-deliveries/events';
import { V1_EVENT_TYPES } from '../../../commands/webhook-endpoints/events';
import type { ApiKeyDoc } from '../../../projections/api-keys';
import type { WebhookDeliveryDoc } from '../../../projections/webhook-deliveries';
import type { WebhookEndpointDoc } from '../../../projections/webhook-endpoints';
import { DELIVERY_EVENT_TYPES } from '../../../queries/webhooks';
import { type Html, html } from '../html';
import {
  csrfField,
  dashboardPage,
  restaurantField,
  type ShellContext,
  secretOnce,
  when,
} from './dashboard-shell';

/** A field of the endpoint forms a refusal can be about; `form` is the whole form (said above its button). */
export type EndpointField = 'url' | 'events' | 'headers' | 'key' | 'form';
/** Why a form was refused, by field, in the order the form shows them (the first takes the focus). */
export type FormErrors = Partial<Record<EndpointField, string>>;
const FIELD_ORDER: EndpointField[] = ['url', 'events', 'headers', 'key', 'form'];

export interface EndpointForm {
  url: string;
  description: string;
  key_id?: string;
  all: boolean;
  events: string[];
  headers: string;
  /** Why it was refused: each said in the form, next to what it is about (not atop the page). */
  errors?: FormErrors;
}

/**
 * A refused form's reasons, each next to its field: the message (role=alert, `<prefix>-<field>-error`),
 * and for the control it is about aria-describedby (with its help), aria-invalid, and autofocus on the
 * first one in the form's order, so the browser scrolls to it and a screen reader reads it, with or
 * without JavaScript.
 */
function formErrors(errors: FormErrors | undefined, prefix: string) {
  const first = FIELD_ORDER.find((f) => errors?.[f]);
  const id = (field: EndpointField) => `${prefix}-${field}-error`;
  return {
    first,
    id,
    /** The message, where it stands in the form. */
    at: (field: EndpointField) =>
      errors?.[field] ? html`<div class="alert" role="alert" id="${id(field)}">${errors[field]}</div>` : '',
    /** The attributes of the control `field` is about (`help`: the id of its help text, kept). */
    attrs: (field: EndpointField, help?: string, focusOnly = false) => {
      const describedBy = [errors?.[field] ? id(field) : '', help ?? ''].filter(Boolean).join(' ');
      return html`${describedBy ? html` aria-describedby="${describedBy}"` : ''}${errors?.[field] && !focusOnly ? html` aria-invalid="true"` : ''}${first === field ? html` autofocus` : ''}`;
    },
  };
}

export const emptyEndpointForm: EndpointForm = {
  url: '',
  description: '',
  all: true,
  events: [],
  headers: '',
};

export const endpointPath = (id: string, restaurantId: string) =>
  `/dashboard/webhooks/${encodeURIComponent(id)}?restaurant=${encodeURIComponent(restaurantId)}`;

const EVENT_WORDS: Record<string, string> = {
  'reservation.created': 'A reservation is created',
  'reservation.updated': 'A reservation changes',
  'reservation.canceled': 'A reservation is canceled',
  'customer.created': 'A customer is created',
  'customer.updated': 'A customer changes',
  'customer.deleted': 'A customer is deleted',
  'customer.merged': 'Customers are merged',
};

const chosenText = (events: string[]) =>
  events.includes('*') ? 'Every event its key can read' : events.join(', ');

/** A legacy endpoint gets RESERVATION_UPDATED for every reservation change: its choice applies once migrated. */
const eventsText = (e: WebhookEndpointDoc) =>
  e.api_version === 'legacy'
    ? `RESERVATION_UPDATED for every reservation change (legacy format). Once migrated to v1: ${e.enabled_events.includes('*') ? 'every event its key can read' : chosenText(e.enabled_events)}`
    : chosenText(e.enabled_events);

const statusBadge = (e: WebhookEndpointDoc, paused = false) =>
  html`<span class="badge ${e.disabled ? 'off' : paused ? 'warn' : 'on'}">${e.disabled ? 'Disabled' : paused ? 'Paused' : 'Enabled'}</span> <span class="badge${e.api_version === 'legacy' ? ' warn' : ''}">${e.api_version === 'legacy' ? 'Legacy format' : 'v1'}</span>`;

/**
 * Why a third-party application's endpoint receives nothing (queries/oauth.ts barredByApiOption), as
 * Connected applications says it.
 */
const pausedNote = (app: string, restaurant: string) =>
  html`<div class="alert">Paused: ${app} is a third-party application, and ${restaurant}’s API option is off. No event is sent to this endpoint, nor resent, until the option is on again (ask Couvert support); a test you send still is.</div>`;

/** The settings fields shared by create and edit, with a refusal's reasons next to their fields. */
function settingsFields(f: EndpointForm, prefix: string, legacy = false): Html {
  const e = formErrors(f.errors, prefix);
  // The events' focus goes to the choice that was made: the first event ticked, else the checked mode.
  const focusEvent = !f.all && f.events.length ? f.events[0] : null;
  const eventsAttrs = (checked: boolean) => (checked ? e.attrs('events', undefined, true) : '');
  return html`<label for="${prefix}-url">URL</label>
${e.at('url')}
<input id="${prefix}-url" name="url" type="url" inputmode="url" required maxlength="2048" value="${f.url}" placeholder="https://example.com/couvert-events"${e.attrs('url', `${prefix}-url-help`)}>
<p class="help" id="${prefix}-url-help">HTTPS, reachable from the internet. Couvert signs each delivery (Service-Signature).</p>
<label for="${prefix}-description">Description <span class="optional">(optional)</span></label>
<input id="${prefix}-description" name="description" type="text" maxlength="500" value="${f.description}">
<fieldset${f.errors?.events ? html` aria-describedby="${e.id('events')}"` : ''}>
  <legend>Events</legend>
  ${e.at('events')}
  ${legacy ? html`<p class="help">This endpoint is in the legacy format: it receives <code>RESERVATION_UPDATED</code> for every reservation change, whatever is chosen here. The choice applies once it is migrated to v1.</p>` : ''}
  <label class="check"><input type="radio" name="events_mode" value="all"${f.all ? html` checked` : ''}${eventsAttrs(f.all)}> <span>Every event its API key can read</span></label>
  <label class="check"><input type="radio" name="events_mode" value="some"${f.all ? '' : html` checked`}${eventsAttrs(!f.all && !focusEvent)}> <span>Only these:</span></label>
  <div class="indent">${V1_EVENT_TYPES.map(
    (t) =>
      html`<label class="check"><input type="checkbox" name="events" value="${t}"${f.events.includes(t) ? html` checked` : ''}${eventsAttrs(t === focusEvent)}> <span>${EVENT_WORDS[t]} <code>${t}</code></span></label>`,
  )}</div>
</fieldset>
<label for="${prefix}-headers">Custom headers <span class="optional">(optional)</span></label>
${e.at('headers')}
<textarea id="${prefix}-headers" name="headers" rows="3" maxlength="20000"${e.attrs('headers', `${prefix}-headers-help`)} spellcheck="false">${f.headers}</textarea>
<p class="help" id="${prefix}-headers-help">One per line, as <code>Name: value</code>. Sent with every delivery. Values are kept encrypted and shown as <code>[redacted]</code>: leave a line as it is to keep its value.</p>`;
}

/** A form's own button, with what refused the whole form said just above it (and the focus on it). */
function submitWithError(f: EndpointForm, prefix: string, label: string): Html {
  const e = formErrors(f.errors, prefix);
  return html`${e.at('form')}
  <button type="submit" class="full"${f.errors?.form ? e.attrs('form', undefined, true) : ''}>${label}</button>`;
}

export function endpointsPage(
  c: ShellContext,
  o: {
    endpoints: WebhookEndpointDoc[];
    keys: ApiKeyDoc[];
    keyNames: Map<string, string>;
    /** Credentials barred by the restaurant's API option (their application's name): endpoints paused. */
    paused: ReadonlyMap<string, string>;
    form: EndpointForm;
    notice?: string | null;
    alert?: string | null;
  },
): string {
  const list = o.endpoints.length
    ? html`<ul class="items">${o.endpoints.map(
        (e) => html`<li>
  <div class="item-head"><h2 class="url"><a href="${endpointPath(e._id, c.restaurant.id)}">${e.url}</a></h2><span>${statusBadge(e, !e.disabled && o.paused.has(e.credential_id))}</span></div>
  ${!e.disabled && o.paused.has(e.credential_id) ? pausedNote(o.paused.get(e.credential_id) as string, c.restaurant.name) : ''}
  ${e.description ? html`<p>${e.description}</p>` : ''}
  <dl class="facts">
    <div><dt>Events</dt><dd>${eventsText(e)}</dd></div>
    <div><dt>Owned by</dt><dd>${o.keyNames.get(e.credential_id) ?? e.owner}</dd></div>
    <div><dt>Created</dt><dd>${when(e.created_at, c.restaurant.timezone)}</dd></div>
  </dl>
  <a class="button secondary" href="${endpointPath(e._id, c.restaurant.id)}" aria-label="Manage and deliveries: ${e.url}">Manage and deliveries</a>
</li>`,
      )}</ul>`
    : html`<p class="empty">${c.restaurant.name} has no webhook endpoint.</p>`;
  const create = o.keys.length
    ? html`<section class="card" aria-labelledby="new-endpoint">
<h2 id="new-endpoint">Add an endpoint</h2>
<form method="post" action="/dashboard/webhooks/create">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  ${settingsFields(o.form, 'new')}
  <label for="new-key">API key</label>
  ${formErrors(o.form.errors, 'new').at('key')}
  <select id="new-key" name="key_id"${formErrors(o.form.errors, 'new').attrs('key', 'new-key-help')}>${o.keys.map(
    (k) =>
      html`<option value="${k._id}"${k._id === o.form.key_id ? html` selected` : ''}>${k.name} (…${k.token_hint})</option>`,
  )}</select>
  <p class="help" id="new-key-help">The endpoint receives only what this key can read, and is deleted if the key is revoked.</p>
  ${submitWithError(o.form, 'new', 'Add the endpoint')}
</form>
</section>`
    : html`<p class="empty">To add an endpoint, first <a href="/dashboard/api-keys?restaurant=${c.restaurant.id}">create an API key</a> that can see reservations or customers: an endpoint receives what its key can read.</p>`;
  return dashboardPage(c, {
    section: 'webhooks',
    title: 'Webhooks',
    lead: html`Couvert sends each change at <strong>${c.restaurant.name}</strong> to these addresses, in the v1 format, signed. Deliveries of the last 30 days can be looked at and resent.`,
    notice: o.notice,
    alert: o.alert,
    body: html`${list}${create}`,
  });
}

/** The endpoint page's one-button actions (the edit form's refusals are said in the form). */
export type EndpointAction = 'test' | 'toggle' | 'rotate' | 'migrate' | 'delete';

export interface DeliveryFilter {
  status: string;
  event_type: string;
}

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
const STATUS_WORDS: Record<string, string> = {
  pending: 'Being attempted',
  succeeded: 'Succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
};

/** Short answers are shown as they are; longer ones are folded (the excerpt is at most 512 characters). */
const FOLD_OVER_CHARS = 160;

function answerExcerpt(a: WebhookDeliveryDoc['attempts'][number], erased: boolean): Html | string {
  if (a.response_excerpt === undefined)
    return html`<p class="small">Answer not kept (recorded before answers were).</p>`;
  // Sealed with the customer the delivery described and erased with them (docs/WEBHOOKS.md): it had a
  // body (a blank one is not sealed), which is not "no body".
  if (erased && !a.response_excerpt)
    return html`<p class="small">The answer was erased with the customer this delivery described.</p>`;
  if (a.response_excerpt === null || a.response_excerpt === '')
    return a.status_code === null ? '' : html`<p class="small">The answer had no body.</p>`;
  const cut = a.response_truncated
    ? html`<p class="small">The first 512 characters; the answer was longer.</p>`
    : '';
  const lines = a.response_excerpt.split('\n').length;
  if ([...a.response_excerpt].length <= FOLD_OVER_CHARS && lines <= 3)
    return html`<pre class="excerpt" aria-label="Answer to attempt ${a.attempt}">${a.response_excerpt}</pre>${cut}`;
  return html`<details class="answer"><summary>Answer (${[...a.response_excerpt].length} characters${a.response_truncated ? ', cut' : ''})</summary><pre class="excerpt" aria-label="Answer to attempt ${a.attempt}">${a.response_excerpt}</pre>${cut}</details>`;
}

function attemptsTable(d: WebhookDeliveryDoc, tz: string, erased?: ReadonlySet<number>): Html {
  if (!d.attempts.length) return html`<p class="small">No attempt yet.</p>`;
  return html`<ol class="attempts">${d.attempts.map(
    (a) =>
      html`<li><p class="attempt-line"><span class="attempt-no">#${a.attempt}</span> <span>${when(a.at, tz)}</span> <strong>${a.status_code ?? html`<span class="bad">${a.error ?? 'no answer'}</span>`}</strong> <span class="small">${a.duration_ms} ms</span></p>${answerExcerpt(a, erased?.has(a.attempt) === true)}</li>`,
  )}</ol>`;
}

export function endpointPage(
  c: ShellContext,
  o: {
    endpoint: WebhookEndpointDoc;
    keyName: string;
    /** The third-party application owning it while the restaurant's API option is off (paused), or null. */
    pausedApp?: string | null;
    form: EndpointForm;
    deliveries: WebhookDeliveryDoc[];
    /** Deliveries a resend would be refused for, and why (said instead of a Resend button). */
    notResent: ReadonlyMap<string, string>;
    /** The attempts whose answer was erased with the customer it described (erasedAnswers), by delivery. */
    erasedAnswers?: ReadonlyMap<string, ReadonlySet<number>>;
    /** The latest finished deliveries failed in a row (queries/webhooks.ts failingStreak), or null. */
    failing?: { count: number; more: boolean; since: string } | null;
    filter: DeliveryFilter;
    older: string | null;
    newest: boolean;
    notice?: string | null;
    alert?: string | null;
    /** A refused resend of a delivery listed here: said in its item (focused), not atop the page. */
    resendError?: { delivery: string; message: string } | null;
    /** An action's refusal (a test, a rotation…): said next to its button, which takes the focus. */
    actionError?: { action: EndpointAction; message: string } | null;
    secret?: string | null;
    /** The outcome of a test delivery (shown after the test's redirect, read from its delivery). */
    test?: {
      at: string;
      status: number | null;
      error: string | null;
      duration: number;
      excerpt: string | null;
      ok: boolean;
    } | null;
  },
): string {
  const e = o.endpoint;
  const tz = c.restaurant.timezone;
  const base = `/dashboard/webhooks/${encodeURIComponent(e._id)}`;
  // Paused by the API option (a disabled endpoint reads Disabled: nothing is sent to it anyway).
  const paused = !e.disabled && !!o.pausedApp;
  const refused = o.actionError ?? null;
  // The refused action's button: named by its reason, and focused (the browser scrolls to it).
  const describedBy = (name: EndpointAction, help?: string) => {
    const ids = [refused?.action === name ? 'action-error' : '', help ?? ''].filter(Boolean).join(' ');
    return html`${ids ? html` aria-describedby="${ids}"` : ''}${refused?.action === name ? html` autofocus` : ''}`;
  };
  const refusedAt = (names: EndpointAction[]) =>
    refused && names.includes(refused.action)
      ? html`<div class="alert" role="alert" id="action-error">${refused.message}</div>`
      : '';
  const action = (name: EndpointAction, label: string, cls = 'secondary', aria?: string, help?: string) =>
    html`<form method="post" action="${base}/${name}">${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}<button type="submit" class="${cls}"${aria ? html` aria-label="${aria}"` : ''}${describedBy(name, help)}>${label}</button></form>`;
  const test = o.test
    ? html`<div class="${o.test.ok ? 'notice' : 'alert'}" role="status">
<p><strong>Test delivery ${o.test.ok ? 'succeeded' : 'failed'}</strong> (sent ${when(o.test.at, tz)}): ${o.test.status !== null ? `answer ${o.test.status}` : (o.test.error ?? 'no answer')} in ${o.test.duration} ms.${paused ? ' The endpoint is still paused: events are not sent to it until the API option is on again.' : ''}</p>
${o.test.excerpt ? html`<p class="small">The endpoint answered:</p><pre class="excerpt">${o.test.excerpt}</pre>` : ''}
</div>`
    : '';
  const failing = o.failing
    ? html`<section class="card warn-card" aria-labelledby="failing">
<h2 id="failing">Deliveries are failing</h2>
<p>${o.failing.count === 1 ? 'The last delivery' : `The last ${o.failing.count}${o.failing.more ? ' or more' : ''} deliveries`} (since ${when(o.failing.since, tz)}) failed after every retry: the endpoint may be down, or refusing them. ${
        e.disabled
          ? html`It is disabled now: nothing is sent to it. Check it with <strong>Send a test</strong>, enable it once it answers, then resend the failed deliveries (filter them by status below).`
          : paused
            ? html`It is paused now (see below): nothing is sent to it, resends included. Check it with <strong>Send a test</strong>; once the API option is on again, resend the failed deliveries (filter them by status below).`
            : html`Nothing disables it on its own, and each delivery is retried for about 4 hours only. Check it with <strong>Send a test</strong>, then resend the failed deliveries (filter them by status below).`
      }</p>
</section>`
    : '';
  const legacy =
    e.api_version === 'legacy'
      ? html`<section class="card warn-card" aria-labelledby="migrate">
<h2 id="migrate">Legacy format</h2>
<p>This endpoint still receives the old <code>RESERVATION_UPDATED</code> format. Migrating it to v1 sends the v1 events (<code>reservation.created</code>, <code>customer.updated</code>…) instead. <strong>Migration is final: it cannot be undone.</strong> Update the receiving program first.</p>
${refusedAt(['migrate'])}
${action('migrate', 'Migrate to v1…', 'danger')}
</section>`
      : '';
  const filter = html`<form class="filters" method="get" action="${base}">
<input type="hidden" name="restaurant" value="${c.restaurant.id}">
<div><label for="f-status">Status</label>
<select id="f-status" name="status"><option value="">Any status</option>${DELIVERY_STATUSES.map(
    (s) =>
      html`<option value="${s}"${o.filter.status === s ? html` selected` : ''}>${STATUS_WORDS[s]}</option>`,
  )}</select></div>
<div><label for="f-type">Event type</label>
<select id="f-type" name="event_type"><option value="">Any event</option>${DELIVERY_EVENT_TYPES.map(
    (t) =>
      html`<option value="${t}"${o.filter.event_type === t ? html` selected` : ''}>${t === TEST_EVENT_TYPE ? 'Test deliveries' : t}</option>`,
  )}</select></div>
<button type="submit" class="secondary">Filter</button>
</form>`;
  const deliveries = o.deliveries.length
    ? html`<ul class="items deliveries">${o.deliveries.map(
        (d) => html`<li>
  <div class="item-head"><h3>${d.test ? html`Test delivery <code>${TEST_EVENT_TYPE}</code>` : html`<code>${d.event_type}</code>`}</h3><span class="badge st-${d.status}">${STATUS_WORDS[d.status] ?? d.status}</span></div>
  <p class="small">${when(d.created_at, tz)} · ${d.attempt_count} attempt${d.attempt_count === 1 ? '' : 's'}${d.last_status_code !== null ? ` · last answer ${d.last_status_code}` : ''}${d.next_attempt_at ? ` · next attempt ${when(d.next_attempt_at, tz)}` : ''} · <span class="mono">${d.event_id}</span></p>
  <details><summary>Attempts</summary>${attemptsTable(d, tz, o.erasedAnswers?.get(d._id))}</details>
  ${
    // A resend just refused is said here, in its item: as the reason that replaces the button (focused,
    // tabindex=-1), or above the button it refused (which names it and takes the focus).
    o.resendError?.delivery === d._id && !(o.notResent.has(d._id) && !d.test && d.status !== 'pending')
      ? html`<div class="alert" role="alert" id="resend-error">${o.resendError.message}</div>`
      : ''
  }${
    !d.test && d.status !== 'pending' && o.notResent.has(d._id)
      ? o.resendError?.delivery === d._id
        ? html`<div class="alert" role="alert" id="resend-error" tabindex="-1" autofocus>${o.notResent.get(d._id)}.</div>`
        : html`<p class="small">${o.notResent.get(d._id)}.</p>`
      : !d.test && d.status !== 'pending'
        ? html`<form method="post" action="${base}/deliveries/${d._id}/resend">${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}<button type="submit" class="secondary" aria-label="Resend ${d.event_type} of ${when(d.created_at, tz)}"${o.resendError?.delivery === d._id ? html` aria-describedby="resend-error" autofocus` : ''}>Resend</button></form>`
        : ''
  }
</li>`,
      )}</ul>`
    : html`<p class="empty">No delivery${o.filter.status || o.filter.event_type ? ' matches these filters' : ''} in the last 30 days.</p>`;
  const pager = html`<p class="pager">${o.newest ? '' : html`<a href="${base}?${new URLSearchParams({ restaurant: c.restaurant.id, status: o.filter.status, event_type: o.filter.event_type })}">Newest</a>`}${
    o.older ? html`<a href="${o.older}">Older deliveries</a>` : ''
  }</p>`;
  return dashboardPage(c, {
    section: 'webhooks',
    title: 'Webhook endpoint',
    switcherAction: null,
    notice: o.notice,
    alert: o.alert,
    body: html`<p><a class="tap" href="/dashboard/webhooks?restaurant=${c.restaurant.id}">← All endpoints</a></p>
${o.secret ? secretOnce('Signing secret', o.secret, 'Copy it now: it verifies the Service-Signature of each delivery, and it will not be shown again.') : ''}
${test}
${failing}
<section class="card" aria-labelledby="ep-url">
<div class="item-head"><h2 id="ep-url" class="url">${e.url}</h2><span>${statusBadge(e, paused)}</span></div>
${paused ? pausedNote(o.pausedApp as string, c.restaurant.name) : ''}
${e.description ? html`<p>${e.description}</p>` : ''}
<dl class="facts">
  <div><dt>Events</dt><dd>${eventsText(e)}</dd></div>
  <div><dt>Owned by</dt><dd>${o.keyName}</dd></div>
  <div><dt>Created</dt><dd>${when(e.created_at, tz)}</dd></div>
  ${e.previous_secret ? html`<div><dt>Previous secret</dt><dd>Still signs until ${when(e.previous_secret.expires_at, tz)}</dd></div>` : ''}
</dl>
${paused ? html`<p class="help" id="test-help">While paused, Send a test (below) still sends one test delivery to this URL (it holds no reservation or customer, only the endpoint’s and ${c.restaurant.name}’s ids), so you can check that it answers. Events are not sent, nor resent, until the API option is on again.</p>` : ''}
${refusedAt(['test', 'toggle', 'rotate', 'delete'])}
<div class="row-actions">
  ${action('test', 'Send a test', 'secondary', undefined, paused ? 'test-help' : undefined)}
  ${action('toggle', e.disabled ? 'Enable' : 'Disable')}
  ${action('rotate', 'Rotate the secret…')}
  ${action('delete', 'Delete…', 'danger', `Delete ${e.url}`)}
</div>
</section>
${legacy}
<section aria-labelledby="deliveries-title">
<h2 id="deliveries-title" class="section-title">Deliveries (last 30 days)</h2>
${filter}
${deliveries}
${pager}
<p class="small">Each attempt shows its answer's status code (or why there was none), how long it took, and the first 512 characters of what the endpoint answered (control characters shown as visible symbols, any echo of the signing secret or signature replaced by [redacted]). Kept for 30 days like the rest of the history.</p>
</section>
<section class="card" aria-labelledby="edit-title">
<h2 id="edit-title">Edit</h2>
<form method="post" action="${base}/edit">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  ${settingsFields(o.form, 'edit', e.api_version === 'legacy')}
  ${submitWithError(o.form, 'edit', 'Save changes')}
</form>
</section>`,
  });
}
