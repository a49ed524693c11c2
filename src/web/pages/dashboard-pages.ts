// The restaurant dashboard's pages (DESIGN §3 "Restaurant dashboard"); the first is Connected
// applications. Issue 15 adds the others beside it, reusing the layout, session and switcher.
import type { Connection } from '../../../queries/oauth';
import { type Html, html, layout } from '../html';
import { dashboardNav } from './dashboard-shell';
import { appLogo, scopeList } from './oauth-pages';

export interface DashboardRestaurant {
  id: string;
  name: string;
}

/** The restaurant switcher (a GET form: choosing a restaurant changes nothing). */
export function restaurantSwitcher(
  restaurants: DashboardRestaurant[],
  current: string,
  action: string,
  /** What the page shows besides the restaurant (the Insights period), kept across the switch. */
  keep: Record<string, string> = {},
): Html {
  if (restaurants.length < 2) return html``;
  return html`<form class="switcher" method="get" action="${action}">
  ${Object.entries(keep).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
  <label for="restaurant">Restaurant</label>
  <select id="restaurant" name="restaurant">${restaurants.map(
    (r) => html`<option value="${r.id}"${r.id === current ? html` selected` : ''}>${r.name}</option>`,
  )}</select>
  <button type="submit" class="secondary">Show</button>
</form>`;
}

/** What "last used" means, on every page that shows it. */
export const lastUsedNote = (what: 'key' | 'token') =>
  `“Last used” is recorded at most once an hour per ${what}: the latest use is within the hour after the time shown.`;

const dateFormat = (iso: string, timezone: string) =>
  new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: timezone }).format(
    new Date(iso),
  );

export function connectionsPage(o: {
  restaurants: DashboardRestaurant[];
  restaurant: DashboardRestaurant & { timezone: string };
  connections: Connection[];
  notice: string | null;
  account: { email: string; csrf: string };
}): string {
  const list = o.connections.length
    ? html`<ul class="connections">${o.connections.map(
        (c) => html`<li>
  <div class="head">${appLogo(c.name, c.logo_url)}<div><h2>${c.name}</h2><span class="small">Connected since ${dateFormat(c.connected_at, o.restaurant.timezone)} · ${c.active_tokens} active token${c.active_tokens === 1 ? '' : 's'} · ${c.last_used_at ? `last used ${dateFormat(c.last_used_at, o.restaurant.timezone)}` : 'not used yet'}</span></div></div>
  ${
    c.paused_by_api_option
      ? html`<div class="alert" role="alert">Paused: ${c.name} is a third-party application, and ${o.restaurant.name}’s API option is off. Its access is kept, but its calls are refused and its webhooks receive nothing until the option is on again (ask Couvert support).</div>
  <p class="small">Once the option is on again, it can:</p>`
      : html`<p class="small">It can:</p>`
  }
  ${scopeList(c.scopes)}
  <form method="post" action="/dashboard/applications/disconnect">
    <input type="hidden" name="csrf_token" value="${o.account.csrf}">
    <input type="hidden" name="restaurant_id" value="${o.restaurant.id}">
    <input type="hidden" name="client_id" value="${c.client_id}">
    <button type="submit" class="danger" aria-label="Disconnect ${c.name}">Disconnect</button>
  </form>
</li>`,
      )}</ul>`
    : html`<p class="empty">No application is connected to ${o.restaurant.name}.</p>`;
  return layout({
    title: 'Connected applications',
    account: o.account,
    wide: true,
    body: html`${dashboardNav('applications', o.restaurant.id)}
<h1>Connected applications</h1>
<p class="lead">Applications that act for <strong>${o.restaurant.name}</strong> through Couvert. Disconnecting one revokes its access at once and deletes the webhook endpoints it created.</p>
${restaurantSwitcher(o.restaurants, o.restaurant.id, '/dashboard')}
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${list}
${o.connections.length ? html`<p class="small">${lastUsedNote('token')}</p>` : ''}`,
  });
}
