// API keys of a restaurant: list, create (the token shown once), revoke.
import type { ApiKeyDoc } from '../../../projections/api-keys';
import type { Scope } from '../../core/scopes';
import { html } from '../html';
import { SCOPE_WORDS } from '../scope-words';
import { lastUsedNote } from './dashboard-pages';
import {
  csrfField,
  dashboardPage,
  restaurantField,
  type ShellContext,
  secretOnce,
  when,
} from './dashboard-shell';
import { scopeList } from './oauth-pages';

export function apiKeysPage(
  c: ShellContext,
  o: {
    keys: ApiKeyDoc[];
    revokedCount: number;
    notice?: string | null;
    alert?: string | null;
    created?: { name: string; token: string } | null;
    /** The create form as sent, and why it was refused (shown next to `field`, else atop the form). */
    form?: { name: string; scopes: string[]; error?: { message: string; field: 'name' | 'scopes' | null } };
  },
): string {
  const tz = c.restaurant.timezone;
  const list = o.keys.length
    ? html`<ul class="items">${o.keys.map(
        (k) => html`<li>
  <div class="item-head"><h2>${k.name}</h2><span class="badge mono">…${k.token_hint}</span></div>
  <dl class="facts">
    <div><dt>Created</dt><dd>${when(k.created_at, tz)}</dd></div>
    <div><dt>Last used</dt><dd>${k.last_used_at ? when(k.last_used_at, tz) : 'Never'}</dd></div>
  </dl>
  <details><summary>${k.scopes.length} permission${k.scopes.length === 1 ? '' : 's'}</summary>${scopeList(k.scopes as Scope[])}</details>
  <form method="post" action="/dashboard/api-keys/revoke">
    ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
    <input type="hidden" name="key_id" value="${k._id}">
    <button type="submit" class="danger" aria-label="Revoke ${k.name}">Revoke</button>
  </form>
</li>`,
      )}</ul>`
    : html`<p class="empty">${c.restaurant.name} has no API key.</p>`;
  const chosen = new Set(o.form?.scopes ?? []);
  const error = o.form?.error;
  const errorAt = (field: 'name' | 'scopes' | null) =>
    error && error.field === field
      ? html`<div class="alert" role="alert" id="key-error">${error.message}</div>`
      : '';
  const invalid = (field: 'name' | 'scopes') => error?.field === field;
  const form = html`<section class="card" aria-labelledby="new-key">
<h2 id="new-key">Create an API key</h2>
<form method="post" action="/dashboard/api-keys/create">
  ${csrfField(c.account.csrf)}${restaurantField(c.restaurant.id)}
  ${errorAt(null)}
  <label for="key-name">Name</label>
  ${errorAt('name')}
  <input id="key-name" name="name" type="text" required maxlength="200" value="${o.form?.name ?? ''}" aria-describedby="${invalid('name') ? 'key-error ' : ''}key-name-help"${invalid('name') ? html` aria-invalid="true" autofocus` : ''}>
  <p class="help" id="key-name-help">Who uses it, e.g. “Front-desk POS”.</p>
  <fieldset${invalid('scopes') ? html` aria-describedby="key-error"` : ''}>
    <legend>It can</legend>
    ${errorAt('scopes')}
    ${(Object.keys(SCOPE_WORDS) as Scope[]).map(
      // Refused for its permissions: the first one takes the focus (autofocus, no script) and names why.
      (s, i) =>
        html`<label class="check"><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? html` checked` : ''}${invalid('scopes') && i === 0 ? html` aria-describedby="key-error" autofocus` : ''}> <span>${SCOPE_WORDS[s]}</span></label>`,
    )}
  </fieldset>
  <button type="submit" class="full">Create the key</button>
</form>
</section>`;
  return dashboardPage(c, {
    section: 'api-keys',
    title: 'API keys',
    lead: html`Keys let a program act for <strong>${c.restaurant.name}</strong> through the Partner API. A key is shown once, when it is created; Couvert keeps only a fingerprint.`,
    notice: o.notice,
    alert: o.alert,
    body: html`${
      o.created
        ? secretOnce(
            `The token of “${o.created.name}”`,
            o.created.token,
            'Copy it now and keep it somewhere safe: it will not be shown again.',
          )
        : ''
    }
${list}
${o.revokedCount ? html`<p class="small">${o.revokedCount} revoked key${o.revokedCount === 1 ? '' : 's'} not shown.</p>` : ''}
<p class="small">${o.keys.length ? `${lastUsedNote('key')} ` : ''}Applications connected through OAuth are under Connected applications.</p>
${form}`,
  });
}
