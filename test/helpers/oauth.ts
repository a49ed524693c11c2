// The OAuth flow over plain HTTP, as a browser without JavaScript would drive it (a cookie jar, the
// forms' hidden fields), and the fixture every OAuth suite starts from.
import { createHash, randomBytes } from 'node:crypto';
import { REQUEST_HANG_MS } from './service';

export const PASSWORD = 'correct horse battery staple';
export const CALLBACK = 'https://pos.example.test/callback';
export const SECRETS = { app_demo: 'demo-secret-0123456789', app_pub: 'pub-secret-0123456789' } as const;

const restaurant = (id: string, name: string, slug: string, api_option: boolean) => ({
  id,
  name,
  slug,
  country_code: 'FR',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  api_option,
});

/** Three restaurants (rest_two without the API option), three users, three applications. */
export function oauthBootstrap(extraRedirects: string[] = []) {
  return {
    restaurants: [
      restaurant('rest_demo', 'Le Demo', 'le-demo', true),
      restaurant('rest_two', 'Chez Deux', 'chez-deux', false),
      restaurant('rest_three', 'Trois Étoiles', 'trois-etoiles', true),
    ],
    users: [
      {
        email: 'manager@demo.test',
        password: PASSWORD,
        restaurants: [
          { id: 'rest_demo', manage_integrations: true },
          { id: 'rest_two', manage_integrations: true },
          { id: 'rest_three', manage_integrations: true },
        ],
      },
      {
        email: 'solo@demo.test',
        password: PASSWORD,
        restaurants: [{ id: 'rest_demo', manage_integrations: true }],
      },
      {
        email: 'viewer@demo.test',
        password: PASSWORD,
        restaurants: [{ id: 'rest_demo', manage_integrations: false }],
      },
    ],
    oauth_applications: [
      {
        client_id: 'app_demo',
        client_secret: SECRETS.app_demo,
        name: 'Demo POS',
        logo_url: null,
        redirect_uris: [CALLBACK, 'https://pos.example.test/callback?tenant=1', ...extraRedirects],
        allowed_scopes: ['CATALOG_READ', 'RESERVATIONS_READ', 'WEBHOOKS_WRITE'],
        published_by_operator: false,
      },
      {
        client_id: 'app_pub',
        client_secret: SECRETS.app_pub,
        name: 'Couvert Widget',
        logo_url: null,
        redirect_uris: [CALLBACK],
        allowed_scopes: ['CATALOG_READ', 'AVAILABILITY_READ'],
        published_by_operator: true,
      },
      {
        client_id: 'app_off',
        client_secret: 'off-secret-0123456789',
        name: 'Retired',
        logo_url: null,
        redirect_uris: [CALLBACK],
        allowed_scopes: ['CATALOG_READ'],
        published_by_operator: true,
        disabled: true,
      },
    ],
  };
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

/** A cookie jar and fetch without redirects: every step is looked at. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  private remember(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (!value || attrs.some((a) => /^\s*max-age=0$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async send(
    method: string,
    path: string,
    form?: Record<string, string> | FormData,
    headers: Record<string, string> = {},
  ) {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | FormData | undefined;
    if (form instanceof FormData)
      body = form; // fetch sets the multipart content type and boundary
    else if (form) {
      body = new URLSearchParams(form).toString();
      h['content-type'] = 'application/x-www-form-urlencoded';
    }
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, {
      method,
      headers: h,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_HANG_MS),
    });
    this.remember(res);
    return {
      status: res.status,
      headers: res.headers,
      text: await res.text(),
      location: res.headers.get('location'),
    };
  }

  get(path: string, headers?: Record<string, string>): Promise<PageResponse> {
    return this.send('GET', path, undefined, headers);
  }
  post(path: string, form: Record<string, string>, headers?: Record<string, string>): Promise<PageResponse> {
    return this.send('POST', path, form, headers);
  }
  /** A multipart form (a file upload), with this browser's cookies. */
  postMultipart(path: string, form: FormData): Promise<PageResponse> {
    return this.send('POST', path, form);
  }
  /** A POST's 303 followed to its page (Post/Redirect/Get), as a browser does; any other answer as is. */
  async followed(res: PageResponse | Promise<PageResponse>): Promise<PageResponse> {
    const r = await res;
    return r.status === 303 && r.location ? this.get(r.location) : r;
  }
}

/** A page's text as a reader sees it: tags dropped, the entities the pages use decoded, spaces folded. */
export const pageText = (html: string) =>
  html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');

/** The hidden fields of the page's form posting to `action` (the first form when not given). */
export function formFields(html: string, action?: string): Record<string, string> {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)];
  const form = action ? forms.find((f) => f[1]?.includes(`action="${action}"`)) : forms[0];
  if (!form) throw new Error(`no form${action ? ` posting to ${action}` : ''} in ${html.slice(0, 500)}`);
  const out: Record<string, string> = {};
  for (const m of (form[2] as string).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    out[m[1] as string] = decode(m[2] as string);
  return out;
}

const decode = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export interface AuthorizeParams {
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  response_type?: string;
  restaurant_hint?: string;
}

export function authorizeQuery(p: AuthorizeParams & { challenge?: string } = {}): string {
  const q: Record<string, string> = {
    client_id: 'app_demo',
    redirect_uri: CALLBACK,
    response_type: 'code',
    scope: 'CATALOG_READ RESERVATIONS_READ',
    state: 'st-123',
    code_challenge: p.challenge ?? pkce().challenge,
    code_challenge_method: 'S256',
  };
  for (const [k, v] of Object.entries(p)) if (k !== 'challenge' && v !== undefined) q[k] = v as string;
  return new URLSearchParams(q).toString();
}

/** Signs in through the sign-in form the page shows; returns the response (303 when accepted). */
export async function signIn(b: Browser, page: PageResponse, email: string, password = PASSWORD) {
  const fields = formFields(page.text, '/sign-in');
  return b.post('/sign-in', { ...fields, email, password });
}

/**
 * A Browser signed in as `email` through the sign-in page that `path` (a dashboard page) sends to;
 * checks the sign-in was accepted (303). Where it was sent next is not followed.
 */
export async function signedInAt(baseUrl: string, path: string, email = 'solo@demo.test'): Promise<Browser> {
  const b = new Browser(baseUrl);
  const first = await b.get(path);
  const accepted = await signIn(b, await b.get(first.location as string), email);
  if (accepted.status !== 303) throw new Error(`sign-in as ${email} answered ${accepted.status}`);
  return b;
}

/** oauthBootstrap() whose first restaurant (rest_demo) also has `fields` (api_keys, webhook_endpoints…). */
export function oauthBootstrapWith(fields: Record<string, unknown>) {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, fields);
  return bootstrap;
}

/**
 * The whole consent flow for `email`: sign-in, restaurant choice (when shown), allow. Returns the
 * redirect back to the application.
 */
export async function consent(
  b: Browser,
  o: { query: string; email?: string; restaurant?: string; decision?: 'allow' | 'deny' },
): Promise<URL> {
  let page = await b.get(`/oauth/authorize?${o.query}`);
  if (page.text.includes('action="/sign-in"')) {
    const signedIn = await signIn(b, page, o.email ?? 'manager@demo.test');
    if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
    page = await b.get(signedIn.location as string);
  }
  if (
    page.text.includes('action="/oauth/authorize/restaurant"') &&
    page.text.includes('name="restaurant_id"')
  ) {
    const fields = formFields(page.text, '/oauth/authorize/restaurant');
    page = await b.post('/oauth/authorize/restaurant', {
      ...fields,
      restaurant_id: o.restaurant ?? 'rest_demo',
    });
  }
  const fields = formFields(page.text, '/oauth/authorize/decision');
  const done = await b.post('/oauth/authorize/decision', { ...fields, decision: o.decision ?? 'allow' });
  if (done.status !== 303) throw new Error(`decision answered ${done.status}: ${done.text.slice(0, 300)}`);
  return new URL(done.location as string);
}

export const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** POST /api/oauth/token, form-encoded, client authentication by HTTP Basic unless `body` carries it. */
export async function tokenRequest(
  base: string,
  form: Record<string, string>,
  o: { client?: [string, string] | null; json?: boolean; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  const client = o.client === undefined ? (['app_demo', SECRETS.app_demo] as [string, string]) : o.client;
  if (client) headers.authorization = basic(client[0], client[1]);
  headers['content-type'] = o.json ? 'application/json' : 'application/x-www-form-urlencoded';
  const res = await fetch(`${base}/api/oauth/token`, {
    method: 'POST',
    headers,
    body: o.json ? JSON.stringify(form) : new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(REQUEST_HANG_MS),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch {}
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  return { status: res.status, headers: res.headers, body: body as Record<string, any>, text };
}
