// Server-rendered HTML: a tagged template that escapes every interpolated value (escape-html) unless it
// is already markup made by this module, and the one page layout.
import escapeHtml from 'escape-html';

const RAW = Symbol('html');
export interface Html {
  [RAW]: string;
}

const isHtml = (v: unknown): v is Html => typeof v === 'object' && v !== null && RAW in v;
export const raw = (markup: string): Html => ({ [RAW]: markup });
export const markup = (h: Html) => h[RAW];

function part(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(part).join('');
  if (isHtml(v)) return v[RAW];
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] as string;
  values.forEach((v, i) => {
    out += part(v) + (strings[i + 1] as string);
  });
  return raw(out);
}

export const STYLESHEET_PATH = '/assets/couvert.css';
/** The import progress page's script (a file: the pages' CSP allows no inline script). */
export const IMPORT_PROGRESS_SCRIPT = '/assets/import-progress.js';

export interface PageOptions {
  title: string;
  body: Html;
  /** "Signed in as …" with a sign-out form, when someone is signed in. */
  account?: { email: string; csrf: string } | null;
  /** Wider main column (the dashboard). */
  wide?: boolean;
  /** Extra <head> markup made by this module (the import progress page's refresh and script). */
  head?: Html;
}

export function layout(o: PageOptions): string {
  const account = o.account
    ? html`<form class="account" method="post" action="/sign-out">
        <span>Signed in as <strong>${o.account.email}</strong></span>
        <input type="hidden" name="csrf_token" value="${o.account.csrf}">
        <button type="submit" class="link">Sign out</button>
      </form>`
    : '';
  return markup(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${o.title} · Couvert</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
${o.head ?? ''}
</head>
<body>
<header class="top"><span class="brand" aria-label="Couvert">Couvert</span>${account}</header>
<main class="${o.wide ? 'wide' : 'narrow'}">
${o.body}
</main>
</body>
</html>
`);
}
