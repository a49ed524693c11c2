// What every dashboard page shares: the section tabs, the restaurant switcher, notices, dates, and a
// confirmation step for actions that cannot be undone (a form posts once without `confirm`, the page
// asks, the second post carries `confirm=yes`): no JavaScript needed.
import { type Html, html, layout } from '../html';
import { type DashboardRestaurant, restaurantSwitcher } from './dashboard-pages';

export type Section = 'applications' | 'api-keys' | 'webhooks' | 'import' | 'insights';

const SECTIONS: { id: Section; path: string; label: string }[] = [
  { id: 'applications', path: '/dashboard', label: 'Connected applications' },
  { id: 'api-keys', path: '/dashboard/api-keys', label: 'API keys' },
  { id: 'webhooks', path: '/dashboard/webhooks', label: 'Webhooks' },
  { id: 'import', path: '/dashboard/import', label: 'Customer import' },
  { id: 'insights', path: '/dashboard/insights', label: 'Insights' },
];

export const sectionPath = (section: Section, restaurantId: string) =>
  `${(SECTIONS.find((s) => s.id === section) as (typeof SECTIONS)[number]).path}?restaurant=${encodeURIComponent(restaurantId)}`;

/** The dashboard's tabs (links: the current one is marked for assistive technology). */
export function dashboardNav(current: Section, restaurantId: string): Html {
  return html`<nav class="tabs" aria-label="Dashboard">
<ul>${SECTIONS.map(
    (s) =>
      html`<li><a href="${sectionPath(s.id, restaurantId)}"${s.id === current ? html` aria-current="page"` : ''}>${s.label}</a></li>`,
  )}</ul>
</nav>`;
}

export interface ShellContext {
  restaurants: DashboardRestaurant[];
  restaurant: DashboardRestaurant & { timezone: string };
  account: { email: string; csrf: string };
}

export function dashboardPage(
  c: ShellContext,
  o: {
    section: Section;
    title: string;
    lead?: Html | string;
    notice?: string | null;
    alert?: string | null;
    body: Html;
    /** Extra markup for <head> (the import progress page's refresh). */
    head?: Html;
    /** Where the switcher goes (the section's list by default). */
    switcherAction?: string | null;
    /** Query parameters the switcher keeps (the Insights period). */
    switcherKeep?: Record<string, string>;
  },
): string {
  const section = SECTIONS.find((s) => s.id === o.section) as (typeof SECTIONS)[number];
  return layout({
    title: `${o.title} · ${c.restaurant.name}`,
    account: c.account,
    wide: true,
    head: o.head,
    body: html`${dashboardNav(o.section, c.restaurant.id)}
<h1>${o.title}</h1>
${o.lead ? html`<p class="lead">${o.lead}</p>` : ''}
${o.switcherAction === null ? '' : restaurantSwitcher(c.restaurants, c.restaurant.id, o.switcherAction ?? section.path, o.switcherKeep)}
${o.notice ? html`<div class="notice" role="status">${o.notice}</div>` : ''}
${o.alert ? html`<div class="alert" role="alert">${o.alert}</div>` : ''}
${o.body}`,
  });
}

export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf_token" value="${csrf}">`;
export const restaurantField = (id: string) => html`<input type="hidden" name="restaurant_id" value="${id}">`;

export const when = (iso: string | null | undefined, timezone: string) =>
  iso
    ? new Intl.DateTimeFormat('en-GB', {
        dateStyle: 'medium',
        timeStyle: 'short',
        timeZone: timezone,
      }).format(new Date(iso))
    : '—';

/**
 * How a confirmation says what the action does: `danger` for what is lost for good (a key revoked, an
 * endpoint deleted), `caution` for a change that is final but loses nothing (a migration), `neutral`
 * for one that breaks nothing (a secret rotated, the old one kept for a while). Only `danger` is an
 * alert: the others are no error, and a screen reader need not interrupt with them.
 */
export type ConfirmTone = 'danger' | 'caution' | 'neutral';

/** "Are you sure?" for an action that cannot be undone: the same form again, with confirm=yes. */
export function confirmPage(
  c: ShellContext,
  o: {
    section: Section;
    title: string;
    warning: Html | string;
    action: string;
    fields: Record<string, string>;
    button: string;
    cancel: string;
    tone?: ConfirmTone;
  },
): string {
  const tone = o.tone ?? 'danger';
  const said =
    tone === 'danger'
      ? html`<div class="alert" role="alert">${o.warning}</div>`
      : html`<p class="${tone === 'caution' ? 'caution' : 'explain'}">${o.warning}</p>`;
  return dashboardPage(c, {
    section: o.section,
    title: o.title,
    switcherAction: null,
    body: html`<div class="card">
${said}
<form method="post" action="${o.action}">
  ${csrfField(c.account.csrf)}
  ${Object.entries(o.fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
  <input type="hidden" name="confirm" value="yes">
  <div class="actions">
    <a class="button secondary" href="${o.cancel}">Cancel</a>
    <button type="submit"${tone === 'neutral' ? '' : html` class="danger-solid"`}>${o.button}</button>
  </div>
</form>
</div>`,
  });
}

/** A secret shown once (an API key's token, a signing secret). */
export function secretOnce(label: string, value: string, note: string): Html {
  return html`<div class="secret" role="status">
<p><strong>${label}</strong></p>
<p class="small">${note}</p>
<label for="secret-value">${label}</label>
<input id="secret-value" class="mono" type="text" readonly value="${value}" autocomplete="off" spellcheck="false">
</div>`;
}
