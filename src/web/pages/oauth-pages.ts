// The pages of the OAuth consent flow: sign-in, restaurant choice, consent, and the page shown when a
// request cannot be sent back to the application. Plain forms that work without JavaScript.
import type { AuthorizationRequest } from '../../../commands/oauth/authorize-request';
import type { Scope } from '../../core/scopes';
import { type Html, html, layout } from '../html';
import { SCOPE_WORDS } from '../scope-words';

export interface AppView {
  name: string;
  logo_url: string | null;
  published_by_operator: boolean;
}

export interface RestaurantView {
  id: string;
  name: string;
  slug: string;
}

/**
 * An application's logo, or the tile of its name's initial when it has none. A logo that does not load
 * shows that tile too instead of a broken image, by CSS alone (the pages run no inline script): a broken
 * image renders its ::before (content: its data-initial), a loaded one never does.
 */
export function appLogo(name: string, logoUrl: string | null): Html {
  const initial = [...name.trim()][0]?.toUpperCase() ?? '?';
  return logoUrl
    ? html`<img class="logo" src="${logoUrl}" alt="" width="56" height="56" data-initial="${initial}">`
    : html`<span class="logo initial" aria-hidden="true">${initial}</span>`;
}

/**
 * The application's logo, name and kind, above the page's <h1> (which names it again): the name is not
 * a heading, so a screen reader's list of headings starts with the page's h1, not a level 2 before it.
 */
export function appBadge(app: AppView): Html {
  return html`<div class="app">${appLogo(app.name, app.logo_url)}<div><p class="app-name">${app.name}</p><span class="badge">${
    app.published_by_operator ? 'Published by Couvert' : 'Third-party application'
  }</span></div></div>`;
}

export const scopeList = (scopes: readonly Scope[]) =>
  html`<ul class="scopes">${scopes.map((s) => html`<li>${SCOPE_WORDS[s]}</li>`)}</ul>`;

export function signInPage(o: {
  csrf: string;
  next: string;
  email?: string;
  error?: string | null;
  app?: AppView | null;
}): string {
  const intro = o.app
    ? html`<p class="lead">Sign in to connect <strong>${o.app.name}</strong> to your restaurant.</p>`
    : html`<p class="lead">Sign in to manage your restaurant's connected applications.</p>`;
  return layout({
    title: 'Sign in',
    body: html`<div class="card">
<h1>Sign in</h1>
${intro}
${o.error ? html`<div class="alert" role="alert" id="sign-in-error">${o.error}</div>` : ''}
<form method="post" action="/sign-in" novalidate>
  <input type="hidden" name="csrf_token" value="${o.csrf}">
  <input type="hidden" name="next" value="${o.next}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${o.email ?? ''}"${
    o.error ? html` aria-describedby="sign-in-error"` : ''
  }${o.email ? '' : html` autofocus`}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required${
    o.email ? html` autofocus` : ''
  }>
  <button type="submit" class="full">Sign in</button>
</form>
</div>`,
  });
}

const requestFields = (query: string, csrf: string) =>
  html`<input type="hidden" name="csrf_token" value="${csrf}"><input type="hidden" name="authorization" value="${query}">`;

export function choicePage(o: {
  csrf: string;
  query: string;
  app: AppView;
  restaurants: RestaurantView[];
  selected: string | null;
  note: string | null;
  account: { email: string; csrf: string };
}): string {
  return layout({
    title: 'Choose a restaurant',
    account: o.account,
    body: html`<div class="card">
${appBadge(o.app)}
<h1>Choose a restaurant</h1>
<p class="lead">Which restaurant should <strong>${o.app.name}</strong> connect to?</p>
${o.note ? html`<div class="notice" role="status">${o.note}</div>` : ''}
<form method="post" action="/oauth/authorize/restaurant">
  ${requestFields(o.query, o.csrf)}
  <fieldset>
    <legend>Restaurants you manage</legend>
    ${o.restaurants.map(
      (r, i) =>
        html`<label class="choice" for="r-${i}"><input type="radio" id="r-${i}" name="restaurant_id" value="${r.id}" required${
          r.id === o.selected || (!o.selected && i === 0) ? html` checked` : ''
        }><span><span>${r.name}</span><span class="sub">${r.slug}</span></span></label>`,
    )}
  </fieldset>
  <button type="submit" class="full">Continue</button>
</form>
</div>`,
  });
}

export function consentPage(o: {
  csrf: string;
  query: string;
  app: AppView;
  restaurant: RestaurantView;
  request: AuthorizationRequest;
  canChange: boolean;
  account: { email: string; csrf: string };
}): string {
  const back = new URL(o.request.redirect_uri).host;
  return layout({
    title: `Allow ${o.app.name}`,
    account: o.account,
    body: html`<div class="card">
${appBadge(o.app)}
<h1>Allow ${o.app.name} to access ${o.restaurant.name}?</h1>
<p>${o.app.name} will be able to:</p>
${scopeList(o.request.scopes)}
<p class="small">It acts for <strong>${o.restaurant.name}</strong> only, until you disconnect it from your Connected applications. You will then be sent back to <strong>${back}</strong>.</p>
<form method="post" action="/oauth/authorize/decision">
  ${requestFields(o.query, o.csrf)}
  <input type="hidden" name="restaurant_id" value="${o.restaurant.id}">
  <div class="actions">
    <button type="submit" name="decision" value="allow">Allow</button>
    <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
  </div>
</form>
${
  o.canChange
    ? html`<form method="post" action="/oauth/authorize/restaurant" class="small">
  ${requestFields(o.query, o.csrf)}
  <button type="submit" class="link">Choose another restaurant</button>
</form>`
    : ''
}
</div>`,
  });
}

export function noRestaurantPage(o: {
  csrf: string;
  query: string;
  app: AppView;
  account: { email: string; csrf: string };
}): string {
  return layout({
    title: 'No restaurant to connect',
    account: o.account,
    body: html`<div class="card">
${appBadge(o.app)}
<h1>No restaurant to connect</h1>
<p>You do not manage integrations for a restaurant that allows ${o.app.name}. ${
      o.app.published_by_operator ? '' : 'A third-party application needs the restaurant\u2019s API option. '
    }Ask the restaurant's owner or Couvert support.</p>
<form method="post" action="/oauth/authorize/decision">
  ${requestFields(o.query, o.csrf)}
  <button type="submit" name="decision" value="deny" class="secondary full">Return to ${o.app.name}</button>
</form>
</div>`,
  });
}

export function messagePage(o: {
  title: string;
  message: string;
  /** What was wrong, one line each (a form's or a link's fields). */
  issues?: readonly string[];
  account?: { email: string; csrf: string } | null;
  /** A way on (a dashboard page's error leads back to the dashboard). */
  back?: { href: string; label: string } | null;
}): string {
  return layout({
    title: o.title,
    account: o.account ?? null,
    body: html`<div class="card">
<h1>${o.title}</h1>
<p>${o.message}</p>
${o.issues?.length ? html`<ul>${o.issues.map((i) => html`<li>${i}</li>`)}</ul>` : ''}
${
  o.back
    ? html`<p><a class="button secondary" href="${o.back.href}">${o.back.label}</a></p>`
    : html`<p class="small">If you followed a link from an application, tell its makers; you can close this page.</p>`
}
</div>`,
  });
}
