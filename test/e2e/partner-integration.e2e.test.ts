// A partner's first integration, written from the partner documents only (README, the OpenAPI document,
// docs/OAUTH.md, WEBHOOKS.md, RESERVATIONS.md, customers.md, MISSED-CALLS.md, CHANGELOG.md and the spec):
// connect through OAuth 2 (PKCE, a manager's consent, the token exchange), subscribe a loopback
// receiver and verify each delivery's signature as WEBHOOKS.md tells a partner to, search → book →
// modify → cancel, keep a CRM in sync with the customers feed, report a missed call, and handle the
// documented errors, rate limits and the "no idempotency key" recovery. Real server, real clock.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, consent, PASSWORD } from '../helpers/oauth';
import { REQUEST_HANG_MS, startTestService, type TestService } from '../helpers/service';
import { publisherQuiet, type Received, type Receiver, startReceiver } from '../helpers/webhook-receiver';

const CLIENT_ID = 'app_crm';
const CLIENT_SECRET = 'crm-secret-0123456789';
const REDIRECT = 'http://127.0.0.1:9/callback';
const MANAGER = 'manager@bistro.test';
const SCOPES = [
  'CATALOG_READ',
  'AVAILABILITY_READ',
  'RESERVATIONS_READ',
  'RESERVATIONS_READ_SENSITIVE',
  'RESERVATIONS_WRITE',
  'RESERVATIONS_CANCEL',
  'CUSTOMERS_READ',
  'CUSTOMERS_WRITE',
  'WEBHOOKS_WRITE',
  'MISSED_CALLS_WRITE',
];

/** What the operator sets up before a partner arrives: a restaurant, its manager, the application. */
function bootstrap() {
  return {
    restaurants: [
      {
        id: 'rest_bistro',
        name: 'Bistro Partner',
        slug: 'bistro-partner',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        api_option: true,
        suspended: false,
        customer_matching: true,
        features: ['MISSED_CALLS'],
        booking_url: 'https://bistro.example/book',
        whatsapp_phone_number_id: '106540352242922',
        message_templates: [
          {
            id: 'tpl_missed',
            type: 'MISSED_CALL',
            channel: 'WHATSAPP',
            status: 'APPROVED',
            body: 'Bonjour {{guest_name}}, réservez chez {{restaurant_name}} : {{booking_link}}',
          },
        ],
        rooms: [{ id: 'room_main', name: 'Main room' }],
        tables: [
          { id: 'tbl_2', name: '2', room_id: 'room_main', min_pax: 1, max_pax: 2 },
          { id: 'tbl_2b', name: '2b', room_id: 'room_main', min_pax: 1, max_pax: 2 },
          { id: 'tbl_4', name: '4', room_id: 'room_main', min_pax: 2, max_pax: 4 },
        ],
        shifts: [
          {
            id: 'shift_dinner',
            name: 'Dinner',
            start_time: '19:00',
            end_time: '22:00',
            days_of_week: [1, 2, 3, 4, 5, 6, 7],
            slot_interval_minutes: 15,
            duration_minutes: 90,
            max_covers: 60,
            requires_room_selection: false,
            requires_approval: false,
            deposit: null,
          },
        ],
      },
    ],
    users: [
      { email: MANAGER, password: PASSWORD, restaurants: [{ id: 'rest_bistro', manage_integrations: true }] },
    ],
    oauth_applications: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        name: 'Acme CRM',
        logo_url: null,
        redirect_uris: [REDIRECT],
        allowed_scopes: SCOPES,
        published_by_operator: false,
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// The partner's webhook verification, from WEBHOOKS.md "Headers and signature" alone:
// `Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the whole
// whsec_ secret>`; during a rotation several `v1=` values; accept when any matches; check `t` against
// your clock (5 minutes).
function verifyDelivery(raw: string, header: string | undefined, secret: string, nowMs = Date.now()) {
  if (!header) throw new Error('no Service-Signature header');
  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const i = part.indexOf('=');
    const [k, v] = [part.slice(0, i).trim(), part.slice(i + 1).trim()];
    if (k === 't') {
      if (t !== undefined) throw new Error('two t= values');
      t = v;
    } else if (k === 'v1') signatures.push(v);
  }
  if (!t || !/^\d+$/.test(t)) throw new Error(`no usable t= in ${header}`);
  if (Math.abs(nowMs / 1000 - Number(t)) > 300) throw new Error(`t=${t} is more than 5 minutes off`);
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${raw}`, 'utf8').digest('hex'));
  if (!signatures.some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected)))
    throw new Error('no v1= signature matches');
}

/** A CRM's receiver: verified deliveries, deduplicated on X-Service-Delivery. */
class Inbox {
  readonly seen = new Map<string, Received>();
  constructor(
    readonly rx: Receiver,
    readonly path: string,
    public secret = '',
  ) {}
  /** Verifies every new delivery; throws on the first that fails (a partner answers 400 to it). */
  accept(): Received[] {
    for (const r of this.rx.for(this.path)) {
      const id = r.headers['x-service-delivery'] as string;
      if (this.seen.has(id)) continue;
      verifyDelivery(r.body, r.headers['service-signature'] as string, this.secret);
      assert.is(r.headers['x-service-timestamp'], r.json.created, 'X-Service-Timestamp is the event time');
      assert.ok(Number(r.headers['x-service-attempt']) >= 1);
      assert.ok(r.headers['x-service-delivery-log-id']);
      this.seen.set(id, r);
    }
    return [...this.seen.values()];
  }
  /** Waits for a verified event of `type` about `objectId` (and `match`), in any order of arrival. */
  async event(type: string, objectId: string, match: (e: Received['json']) => boolean = () => true) {
    const find = () =>
      this.accept().find(
        (r) => r.json.type === type && r.json.data?.object?.id === objectId && match(r.json),
      );
    let n = this.rx.for(this.path).length;
    for (;;) {
      const hit = find();
      if (hit) return hit.json;
      await this.rx.waitFor(this.path, n + 1);
      n = this.rx.for(this.path).length;
    }
  }
}

/** What the served OpenAPI document tells a partner about one operation. */
const described = (ctx: Ctx, method: string, path: string): string =>
  ctx.doc.paths[`/api/partner/v1${path}`][method].description;

/** Tomorrow in UTC, as a window of the whole (UTC) day: the restaurant's dinner falls inside it. */
function tomorrowWindow() {
  const d = new Date(Date.now() + 86_400_000);
  const day = d.toISOString().slice(0, 10);
  return { from: `${day}T00:00:00Z`, to: `${day}T23:59:59Z` };
}

const pkce = () => {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function form(url: string, fields: Record<string, string>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(REQUEST_HANG_MS),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: the partner reads arbitrary JSON
  let body: any = null;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, body, text };
}

interface Ctx {
  // biome-ignore lint/suspicious/noExplicitAny: the served OpenAPI document, read as a partner reads it
  doc: any;
  svc: TestService;
  rx: Receiver;
  token: string;
  metadata: {
    issuer: string;
    authorization_endpoint: string;
    token_endpoint: string;
    revocation_endpoint: string;
    code_challenge_methods_supported: string[];
  };
  inbox: Inbox;
  endpointId: string;
  customerId: string;
}
const t = suite<Ctx>('a partner integrating for the first time', {} as Ctx);

t.before(async (ctx) => {
  ctx.rx = await startReceiver();
  ctx.svc = await startTestService({
    bootstrap: bootstrap(),
    env: {
      ROLES: 'api,projector,webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      RATE_LIMIT_PER_MINUTE: '200',
    },
  }).catch(async (err) => {
    await ctx.rx.close();
    throw err;
  });
});
t.after(async ({ svc, rx }) => {
  await svc?.close();
  await rx?.close();
});

t('discovers the API and the authorization server from the public documents', async (ctx) => {
  const root = await ctx.svc.api('GET', '');
  assert.is(root.status, 200);
  assert.is(root.body.links.openapi, `${ctx.svc.url}/api/partner/v1/openapi.json`);
  const doc = await ctx.svc.api('GET', '/openapi.json');
  assert.is(doc.body.openapi, '3.0.3');
  ctx.doc = doc.body;
  const meta = await ctx.svc.api('GET', '/.well-known/oauth-authorization-server');
  assert.is(meta.status, 200);
  ctx.metadata = meta.body;
  assert.equal(ctx.metadata.code_challenge_methods_supported, ['S256']);
  assert.is(ctx.metadata.issuer, ctx.svc.url);
});

t('connects through OAuth 2: PKCE, the manager consents, the code buys a token', async (ctx) => {
  const { verifier, challenge } = pkce();
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: SCOPES.join(' '),
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    restaurant_hint: 'bistro-partner',
  }).toString();
  const authorize = new URL(ctx.metadata.authorization_endpoint);
  assert.is(authorize.origin, ctx.svc.url);
  const back = await consent(new Browser(ctx.svc.url), { query, email: MANAGER, restaurant: 'rest_bistro' });
  assert.is(back.origin + back.pathname, REDIRECT);
  assert.is(back.searchParams.get('state'), state);
  assert.is(back.searchParams.get('iss'), ctx.metadata.issuer, 'RFC 9207: iss matches the metadata');
  const code = back.searchParams.get('code') as string;

  // client_secret_post (the metadata's second method)
  const token = await form(ctx.metadata.token_endpoint, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  assert.is(token.status, 200, token.text);
  assert.is(token.headers.get('cache-control'), 'no-store');
  assert.is(token.body.token_type, 'Bearer');
  assert.equal(token.body.scope.split(' ').sort(), [...SCOPES].sort());
  assert.equal(token.body.restaurant, { id: 'rest_bistro', name: 'Bistro Partner', slug: 'bistro-partner' });
  assert.not.ok('refresh_token' in token.body, 'OAUTH.md: no refresh token');
  assert.not.ok('expires_in' in token.body, 'OAUTH.md: no expiry');
  ctx.token = token.body.access_token;

  // A partner's library tries to refresh: the token endpoint says the grant is not supported.
  const refresh = await form(ctx.metadata.token_endpoint, {
    grant_type: 'refresh_token',
    refresh_token: ctx.token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  assert.is(refresh.status, 400, refresh.text);
  assert.is(refresh.body.error, 'unsupported_grant_type');

  const me = await ctx.svc.api('GET', '/me', { token: ctx.token });
  assert.is(me.status, 200, me.text);
  assert.is(me.body.data.credential.type, 'OAUTH');
});

t(
  'subscribes a loopback receiver, keeps the secret shown once, and verifies a test delivery',
  async (ctx) => {
    ctx.inbox = new Inbox(ctx.rx, '/crm-hook');
    const created = await ctx.svc.api('POST', '/webhook-endpoints', {
      token: ctx.token,
      body: { url: ctx.rx.url('/crm-hook'), description: 'Acme CRM sync' },
    });
    assert.is(created.status, 201, created.text);
    assert.is(
      created.headers.get('cache-control'),
      'no-store',
      'WEBHOOKS.md: the secret answer is not cached',
    );
    assert.match(created.body.data.secret, /^whsec_/);
    assert.equal(created.body.data.enabled_events, ['*']);
    assert.is(created.body.data.api_version, 'v1');
    ctx.endpointId = created.body.data.id;
    ctx.inbox.secret = created.body.data.secret;
    const again = await ctx.svc.api('GET', `/webhook-endpoints/${ctx.endpointId}`, { token: ctx.token });
    assert.is(again.status, 200);
    assert.not.ok('secret' in again.body.data, 'the secret is shown only at creation');

    const test = await ctx.svc.api('POST', `/webhook-endpoints/${ctx.endpointId}/test`, {
      token: ctx.token,
      body: {},
    });
    assert.is(test.status, 200, test.text);
    assert.is(test.body.data.succeeded, true);
    const [delivery] = await ctx.rx.waitFor('/crm-hook', 1);
    const got = delivery as Received;
    assert.is(got.headers['x-service-test'], 'true');
    assert.is(got.json.type, 'webhook_endpoint.test');
    assert.is(got.json.api_version, 'v1');
    ctx.inbox.accept();
    // A forged body does not verify.
    assert.throws(() =>
      verifyDelivery(`${got.body} `, got.headers['service-signature'] as string, ctx.inbox.secret),
    );
  },
);

t('searches availability, books, modifies and cancels, with a verified webhook for each', async (ctx) => {
  const { from, to } = tomorrowWindow();
  const search = await ctx.svc.api(
    'GET',
    `/availability?${new URLSearchParams({ start_at_from: from, start_at_to: to, party_size: '2' })}`,
    { token: ctx.token },
  );
  assert.is(search.status, 200, search.text);
  type Slot = { start_at: string; shift_id: string; room_id: string | null };
  const slots = search.body.data.slots as Slot[];
  assert.ok(slots.length >= 2, search.text);
  const first = slots[0] as Slot;
  const later = slots[slots.length - 1] as Slot;
  const check = await ctx.svc.api('POST', '/availability/check', {
    token: ctx.token,
    body: { start_at: first.start_at, party_size: 2, shift_id: first.shift_id },
  });
  assert.is(check.status, 200, check.text);
  assert.is(check.body.data.available, true);

  const externalId = `acme-${randomBytes(4).toString('hex')}`;
  const booked = await ctx.svc.api('POST', '/reservations', {
    token: ctx.token,
    body: {
      party_size: 2,
      start_at: first.start_at,
      shift_id: first.shift_id,
      external_id: externalId,
      customer: { name: 'Jeanne Martin', email: 'jeanne.martin@example.com', phone_number: '06 12 34 56 78' },
    },
  });
  assert.is(booked.status, 201, booked.text);
  const reservation = booked.body.data;
  assert.is(reservation.external_id, externalId);
  assert.is(reservation.customer.phone_number, '+33612345678');
  ctx.customerId = reservation.customer.id;

  const createdEvt = await ctx.inbox.event('reservation.created', reservation.id);
  // data.object is what GET /reservations/{id} answers, in the state the event made (WEBHOOKS.md)
  assert.equal(createdEvt.data.object, reservation);
  const customerEvt = await ctx.inbox.event('customer.created', reservation.customer.id);
  const customer = await ctx.svc.api('GET', `/customers/${reservation.customer.id}`, { token: ctx.token });
  // …with the stats as they were when it was published: this reservation may not count yet.
  const { stats: _, ...withoutStats } = customer.body.data;
  assert.equal({ ...customerEvt.data.object, stats: undefined }, { ...withoutStats, stats: undefined });

  // Modify: a larger party at a later slot.
  const moved = await ctx.svc.api('PATCH', `/reservations/${reservation.id}`, {
    token: ctx.token,
    body: { party_size: 3, start_at: later.start_at, shift_id: later.shift_id },
  });
  assert.is(moved.status, 200, moved.text);
  assert.is(moved.body.data.party_size, 3);
  const updatedEvt = await ctx.inbox.event('reservation.updated', reservation.id);
  assert.is(updatedEvt.data.previous_attributes.party_size, 2);
  assert.is(updatedEvt.data.previous_attributes.start_at, reservation.start_at);
  assert.equal(updatedEvt.data.object, moved.body.data);

  // Cancel, twice (repeating is safe).
  const canceled = await ctx.svc.api('POST', `/reservations/${reservation.id}/cancel`, {
    token: ctx.token,
    body: { reason: 'Guest called the CRM' },
  });
  assert.is(canceled.status, 200, canceled.text);
  assert.is(canceled.body.data.status, 'CANCELED_BY_RESTAURANT');
  assert.is(canceled.body.data.cancellation_reason, 'Guest called the CRM');
  const again = await ctx.svc.api('POST', `/reservations/${reservation.id}/cancel`, {
    token: ctx.token,
    body: {},
  });
  assert.is(again.status, 200, again.text);
  assert.is(again.body.data.cancellation_reason, 'Guest called the CRM');
  const canceledEvt = await ctx.inbox.event('reservation.canceled', reservation.id);
  assert.equal(canceledEvt.data.object, canceled.body.data);
  assert.ok(canceledEvt.data.previous_attributes.status);
});

/** The CRM's copy of the restaurant's customers, kept by the sync feed as customers.md tells. */
class Crm {
  readonly customers = new Map<string, { updated_at: string; name: string; tags: string[] }>();
  since: string | null = null;
  pages = 0;
  constructor(
    readonly svc: TestService,
    readonly token: string,
  ) {}
  async sync(limit = 2) {
    let cursor: string | null = null;
    // "a few minutes earlier, because late commits can carry a slightly older timestamp"
    const since = this.since ? new Date(Date.parse(this.since) - 5 * 60_000).toISOString() : null;
    let last = this.since;
    for (;;) {
      const q = new URLSearchParams({ limit: String(limit) });
      if (since) q.set('updated_since', since);
      if (cursor) q.set('cursor', cursor);
      const page = await this.svc.api('GET', `/customers?${q}`, { token: this.token });
      assert.is(page.status, 200, page.text);
      this.pages++;
      for (const c of page.body.data) {
        this.customers.set(c.id, { updated_at: c.updated_at, name: c.name, tags: c.tags });
        if (!last || c.updated_at > last) last = c.updated_at;
      }
      if (!page.body.pagination.has_more) break;
      cursor = page.body.pagination.next_cursor;
      assert.type(cursor, 'string');
    }
    this.since = last;
  }
}

t('keeps a CRM in sync with the customers feed: pages, cursor, updated_since', async (ctx) => {
  for (const [i, name] of ['Ana Souza', 'Bruno Keller', 'Chloé Dubois'].entries()) {
    const res = await ctx.svc.api('POST', '/customers', {
      token: ctx.token,
      body: { name, external_id: `crm-${i}`, email: `guest${i}@example.com`, tags: ['crm'] },
    });
    assert.is(res.status, 201, res.text);
    assert.is(res.body.result, 'created');
  }
  // The same external_id again (a retried call): matched, nothing written.
  const replay = await ctx.svc.api('POST', '/customers', {
    token: ctx.token,
    body: { name: 'Ana S.', external_id: 'crm-0' },
  });
  assert.is(replay.status, 200, replay.text);
  assert.is(replay.body.result, 'matched');
  assert.is(replay.body.data.name, 'Ana Souza');

  const crm = new Crm(ctx.svc, ctx.token);
  await crm.sync();
  assert.is(crm.customers.size, 4, 'the guest booked earlier and the three created');
  assert.ok(crm.pages >= 2, 'followed next_cursor');
  assert.ok(crm.customers.has(ctx.customerId));

  // The CRM handles a refused cursor by the issue code the document names for it.
  const page = await ctx.svc.api('GET', '/customers?limit=1', { token: ctx.token });
  const cursor = page.body.pagination.next_cursor as string;
  const refusals = [
    `/customers?limit=1&tag=crm&cursor=${encodeURIComponent(cursor)}`,
    `/customers?limit=1&cursor=${encodeURIComponent(`${cursor.slice(0, -2)}xx`)}`,
  ];
  for (const path of refusals) {
    const refused = await ctx.svc.api('GET', path, { token: ctx.token });
    assert.is(refused.status, 400, refused.text);
    const code = refused.body.error.details.issues[0].code as string;
    assert.ok(
      described(ctx, 'get', '/customers').includes(`\`${code}\``),
      `GET /customers documents ${code}`,
    );
  }

  const changed = await ctx.svc.api('PATCH', `/customers/${replay.body.data.id}`, {
    token: ctx.token,
    body: { tags: ['crm', 'vip'] },
  });
  assert.is(changed.status, 200, changed.text);
  const evt = await ctx.inbox.event('customer.updated', replay.body.data.id);
  assert.equal(evt.data.previous_attributes.tags, ['crm']);
  assert.not.ok('updated_at' in evt.data.previous_attributes, "WEBHOOKS.md: a customer's do not");
  // data.object is what GET /customers/{id} answers (WEBHOOKS.md)
  assert.equal(evt.data.object, changed.body.data);
  const pagesBefore = crm.pages;
  await crm.sync();
  assert.equal(crm.customers.get(replay.body.data.id)?.tags, ['crm', 'vip']);
  assert.ok(crm.pages > pagesBefore);
});

t('reports a missed call once; a retry with the same external_call_id sends nothing again', async (ctx) => {
  const body = { caller_phone_number: '+33 6 98 76 54 32', external_call_id: 'pbx-call-0001' };
  const first = await ctx.svc.api('POST', '/missed-calls', { token: ctx.token, body });
  assert.ok(first.status === 201, first.text);
  assert.is(first.body.data.outcome, 'SENT');
  assert.is(first.body.data.caller_phone_number, '+33698765432');
  assert.is(first.body.data.template_type, 'MISSED_CALL');
  const retry = await ctx.svc.api('POST', '/missed-calls', { token: ctx.token, body });
  assert.is(retry.body.data.outcome, 'SKIPPED_DUPLICATE', retry.text);
  assert.is(retry.body.data.id, first.body.data.id);
  const read = await ctx.svc.api('GET', `/missed-calls/${first.body.data.id}`, { token: ctx.token });
  assert.is(read.status, 200, read.text);
  assert.is(read.body.data.outcome, 'SENT');
  // The caller became a customer named after the number: the CRM learns of it.
  await ctx.inbox.event('customer.created', first.body.data.customer_id);
});

t('handles errors by their documented codes', async (ctx) => {
  const none = await ctx.svc.api('GET', '/reservations');
  assert.is(none.status, 401);
  assert.is(none.body.error.code, 'AUTHENTICATION_REQUIRED');
  assert.is(none.headers.get('x-request-id'), none.body.error.request_id);
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
  const bad = await ctx.svc.api('GET', '/reservations', {
    token: 'couvert_pk_not_a_real_token_000000000000',
  });
  assert.is(bad.status, 401);
  assert.is(bad.body.error.code, 'INVALID_AUTHENTICATION');

  const typo = await ctx.svc.api('GET', '/reservations?per_pag=10', { token: ctx.token });
  assert.is(typo.status, 400);
  assert.is(typo.body.error.code, 'VALIDATION_ERROR');
  assert.is(typo.body.error.details.issues[0].code, 'unknown_parameter');

  const missing = await ctx.svc.api('GET', '/reservations/res_does_not_exist', { token: ctx.token });
  assert.is(missing.status, 404);
  assert.is(missing.body.error.code, 'RESOURCE_NOT_FOUND');

  const { from } = tomorrowWindow();
  const closed = await ctx.svc.api('POST', '/reservations', {
    token: ctx.token,
    body: { party_size: 2, start_at: from.replace('T00:00:00Z', 'T03:00:00Z') },
  });
  assert.is(closed.status, 422, closed.text);
  assert.is(closed.body.error.code, 'VALIDATION_ERROR');
  assert.type(closed.body.error.details.reason, 'string');

  const unknownShift = await ctx.svc.api('POST', '/reservations', {
    token: ctx.token,
    body: { party_size: 2, start_at: from, shift_id: 'shift_nope' },
  });
  assert.is(unknownShift.status, 422, unknownShift.text);
  assert.is(unknownShift.body.error.details.reason, 'UNKNOWN_SHIFT');
});

t('no idempotency key: after a lost answer, finds the reservation by external_id (spec §7)', async (ctx) => {
  const { from, to } = tomorrowWindow();
  const search = await ctx.svc.api(
    'GET',
    `/availability?${new URLSearchParams({ start_at_from: from, start_at_to: to, party_size: '4' })}`,
    { token: ctx.token },
  );
  const slot = search.body.data.slots[0];
  const body = {
    party_size: 4,
    start_at: slot.start_at,
    shift_id: slot.shift_id,
    external_id: 'acme-lost-1',
  };
  const first = await ctx.svc.api('POST', '/reservations', { token: ctx.token, body });
  assert.is(first.status, 201, first.text);
  // The answer was "lost": the partner looks before creating again.
  const found = await ctx.svc.api('GET', '/reservations?external_id=acme-lost-1', { token: ctx.token });
  assert.is(found.status, 200, found.text);
  assert.is(found.body.data.length, 1);
  assert.is(found.body.data[0].id, first.body.data.id);
  // Sending it again anyway is refused, not a second booking.
  const again = await ctx.svc.api('POST', '/reservations', { token: ctx.token, body });
  assert.is(again.status, 409, again.text);
  assert.is(again.body.error.code, 'RESOURCE_CONFLICT');
  const still = await ctx.svc.api('GET', '/reservations?external_id=acme-lost-1', { token: ctx.token });
  assert.is(still.body.data.length, 1);
  // A partner used to Stripe sends an Idempotency-Key: the reference must say it protects nothing.
  const retried = { party_size: 2, start_at: slot.start_at, shift_id: slot.shift_id };
  const headers = { 'idempotency-key': 'acme-retry-1' };
  const once = await ctx.svc.api('POST', '/reservations', { token: ctx.token, body: retried, headers });
  const twice = await ctx.svc.api('POST', '/reservations', { token: ctx.token, body: retried, headers });
  assert.is(once.status, 201, once.text);
  assert.is(twice.status, 201, twice.text);
  assert.is.not(once.body.data.id, twice.body.data.id, 'the header is ignored: two reservations');
  assert.match(described(ctx, 'post', '/reservations'), /`Idempotency-Key`/);
  for (const r of [once, twice])
    await ctx.svc.api('POST', `/reservations/${r.body.data.id}/cancel`, { token: ctx.token, body: {} });
});

t('reads its delivery history: every event delivered on the first attempt', async (ctx) => {
  // Deliveries of the last writes may still be on their way: read the history once the publisher has
  // sent everything it can (one read, not a poll against the partner's rate limit).
  await publisherQuiet(ctx.svc.rt, ctx.svc.webhooks);
  const all = await ctx.svc.api('GET', `/webhook-endpoints/${ctx.endpointId}/deliveries?limit=100`, {
    token: ctx.token,
  });
  assert.is(all.status, 200, all.text);
  const verified = ctx.inbox.accept();
  assert.ok(all.body.data.length >= verified.length, all.text);
  for (const d of all.body.data) {
    assert.is(d.status, 'succeeded', JSON.stringify(d));
    assert.equal(
      // biome-ignore lint/suspicious/noExplicitAny: an attempt as the API answers it
      d.attempts.map((a: any) => a.attempt),
      [1],
      JSON.stringify(d),
    );
  }
  // Paged one at a time, following next_cursor as `cursor` (as GET /customers takes it) or by its former
  // name `starting_after`: the same pages, together the whole history.
  for (const name of ['cursor', 'starting_after']) {
    const ids: string[] = [];
    let next: string | null = null;
    do {
      const page = await ctx.svc.api(
        'GET',
        `/webhook-endpoints/${ctx.endpointId}/deliveries?limit=2${next ? `&${name}=${next}` : ''}`,
        { token: ctx.token },
      );
      assert.is(page.status, 200, page.text);
      ids.push(...page.body.data.map((d: { id: string }) => d.id));
      next = page.body.pagination.next_cursor;
    } while (next);
    assert.equal(
      ids,
      all.body.data.map((d: { id: string }) => d.id),
      name,
    );
  }
  const canceled = await ctx.svc.api(
    'GET',
    `/webhook-endpoints/${ctx.endpointId}/deliveries?event_type=reservation.canceled`,
    { token: ctx.token },
  );
  assert.is(canceled.status, 200, canceled.text);
  assert.ok(canceled.body.data.length >= 1);
  for (const d of canceled.body.data) assert.is(d.event_type, 'reservation.canceled');
});

t('a failed delivery is retried with the same X-Service-Delivery, signed at its attempt', async (ctx) => {
  ctx.rx.on('/crm-hook', { statuses: [503, 200] });
  try {
    await retriedDelivery(ctx);
  } finally {
    ctx.rx.on('/crm-hook', {});
  }
});

async function retriedDelivery(ctx: Ctx) {
  const res = await ctx.svc.api('POST', '/customers', {
    token: ctx.token,
    body: { name: 'Retry Guest', email: 'retry.guest@example.com' },
  });
  assert.is(res.status, 201, res.text);
  const id = res.body.data.id;
  const before = ctx.rx.for('/crm-hook').length;
  const [first, second] = (await ctx.rx.waitFor('/crm-hook', before + 2)).slice(before) as Received[];
  assert.is(first?.headers['x-service-delivery'], second?.headers['x-service-delivery']);
  assert.is(first?.headers['x-service-attempt'], '1');
  assert.is(second?.headers['x-service-attempt'], '2');
  assert.is.not(first?.headers['x-service-delivery-log-id'], second?.headers['x-service-delivery-log-id']);
  // t is when each attempt was signed (the retry comes at least 4 s later), the event's time stays.
  const signedAt = (r?: Received) => Number(/^t=(\d+),/.exec(r?.headers['service-signature'] as string)?.[1]);
  assert.ok(signedAt(second) > signedAt(first), 'the retry is signed afresh');
  assert.is(second?.headers['x-service-timestamp'], first?.headers['x-service-timestamp']);
  const evt = await ctx.inbox.event('customer.created', id);
  assert.is(evt.data.object.email, 'retry.guest@example.com');
}

t('rotates its signing secret: deliveries verify with the new and every old secret in grace', async (ctx) => {
  const secrets = [ctx.inbox.secret];
  for (const grace of [3600, 1800]) {
    const rotated = await ctx.svc.api('POST', `/webhook-endpoints/${ctx.endpointId}/rotate-secret`, {
      token: ctx.token,
      body: { grace_period_seconds: grace },
    });
    assert.is(rotated.status, 200, rotated.text);
    assert.is(rotated.headers.get('cache-control'), 'no-store');
    secrets.push(rotated.body.data.secret);
  }
  const before = ctx.rx.for('/crm-hook').length;
  const test = await ctx.svc.api('POST', `/webhook-endpoints/${ctx.endpointId}/test`, {
    token: ctx.token,
    body: {},
  });
  assert.is(test.status, 200, test.text);
  const got = (await ctx.rx.waitFor('/crm-hook', before + 1))[before] as Received;
  // A receiver that deployed any of the three secrets still accepts it (WEBHOOKS.md, "Headers and signature").
  for (const secret of secrets) verifyDelivery(got.body, got.headers['service-signature'] as string, secret);
  assert.is((got.headers['service-signature'] as string).split(',v1=').length, 4);
  // The reference says so too (it said the second rotation dropped the first old secret).
  assert.match(described(ctx, 'post', '/webhook-endpoints/{id}/rotate-secret'), /up to 4/);
  ctx.inbox.secret = secrets[secrets.length - 1] as string;
});

t(
  'pauses its endpoint while its receiver is down, and tests the URL before enabling it again',
  async (ctx) => {
    const path = `/webhook-endpoints/${ctx.endpointId}`;
    const paused = await ctx.svc.api('PATCH', path, { token: ctx.token, body: { disabled: true } });
    assert.is(paused.status, 200, paused.text);
    assert.is(paused.body.data.disabled, true);
    const before = ctx.rx.for('/crm-hook').length;
    const test = await ctx.svc.api('POST', `${path}/test`, { token: ctx.token, body: {} });
    assert.is(test.status, 200, test.text);
    assert.is(test.body.data.succeeded, true);
    const got = (await ctx.rx.waitFor('/crm-hook', before + 1))[before] as Received;
    assert.is(got.json.type, 'webhook_endpoint.test');
    ctx.inbox.accept();
    // The reference says a test still goes to a disabled endpoint (WEBHOOKS.md said it received nothing).
    assert.match(described(ctx, 'post', '/webhook-endpoints/{id}/test'), /disabled endpoint/);
    const patch = ctx.doc.paths['/api/partner/v1/webhook-endpoints/{id}'].patch;
    const ref = patch.requestBody.content['application/json'].schema.$ref as string | undefined;
    const schema = ref
      ? ctx.doc.components.schemas[ref.split('/').pop() as string]
      : patch.requestBody.content['application/json'].schema;
    assert.match(schema.properties.disabled.description, /test deliveries/);
    // Resending while paused, or resending a test, is refused with a reason the partner can act on.
    const history = await ctx.svc.api('GET', `${path}/deliveries?limit=100`, { token: ctx.token });
    // biome-ignore lint/suspicious/noExplicitAny: deliveries as the API answers them
    const deliveries = history.body.data as any[];
    const event = deliveries.find((d) => !d.test && d.status === 'succeeded');
    const testDelivery = deliveries.find((d) => d.test);
    const resend = described(ctx, 'post', '/webhook-endpoints/{id}/deliveries/{delivery_id}/resend');
    for (const [delivery, reason] of [
      [event, 'endpoint_disabled'],
      [testDelivery, 'test_delivery'],
    ]) {
      const refused = await ctx.svc.api('POST', `${path}/deliveries/${delivery.id}/resend`, {
        token: ctx.token,
        body: {},
      });
      assert.is(refused.status, 409, refused.text);
      assert.is(refused.body.error.details?.reason, reason, refused.text);
      assert.ok(resend.includes(reason as string), `the resend reference names ${reason}`);
    }
    const resumed = await ctx.svc.api('PATCH', path, { token: ctx.token, body: { disabled: false } });
    assert.is(resumed.body.data.disabled, false);
  },
);

t('a narrower connection: 403 names the missing scope; a replayed code revokes its token', async (ctx) => {
  const { verifier, challenge } = pkce();
  const back = await consent(new Browser(ctx.svc.url), {
    query: new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'CATALOG_READ AVAILABILITY_READ',
      state: 'narrow',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString(),
    email: MANAGER,
  });
  const exchange = {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') as string,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  };
  const issued = await form(ctx.metadata.token_endpoint, exchange);
  assert.is(issued.status, 200, issued.text);
  const narrow = issued.body.access_token as string;
  const forbidden = await ctx.svc.api('GET', '/customers', { token: narrow });
  assert.is(forbidden.status, 403, forbidden.text);
  assert.is(forbidden.body.error.code, 'INSUFFICIENT_SCOPE');
  assert.equal(forbidden.body.error.details.missing_scopes, ['CUSTOMERS_READ']);

  const replay = await form(ctx.metadata.token_endpoint, exchange);
  assert.is(replay.status, 400, replay.text);
  assert.is(replay.body.error, 'invalid_grant');
  const revoked = await ctx.svc.api('GET', '/me', { token: narrow });
  assert.is(revoked.status, 401);
  assert.is(revoked.body.error.code, 'INVALID_AUTHENTICATION');
  // The main connection is untouched.
  assert.is((await ctx.svc.api('GET', '/me', { token: ctx.token })).status, 200);
});

t('disconnects: revocation answers 200, the token stops working, its endpoint is deleted', async (ctx) => {
  const revoke = await form(ctx.metadata.revocation_endpoint, {
    token: ctx.token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  assert.is(revoke.status, 200, revoke.text);
  const after = await ctx.svc.api('GET', '/me', { token: ctx.token });
  assert.is(after.status, 401);
  assert.is(after.body.error.code, 'INVALID_AUTHENTICATION');
  assert.match(after.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const again = await form(ctx.metadata.revocation_endpoint, {
    token: ctx.token,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  assert.is(again.status, 200, 'revoking twice is fine (RFC 7009)');

  // Connecting again: a new token, and the revoked token's endpoint is gone (subscribe anew).
  const { verifier, challenge } = pkce();
  const back = await consent(new Browser(ctx.svc.url), {
    query: new URLSearchParams({
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'WEBHOOKS_WRITE',
      state: 'again',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }).toString(),
    email: MANAGER,
  });
  const token = await form(ctx.metadata.token_endpoint, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') as string,
    redirect_uri: REDIRECT,
    code_verifier: verifier,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
  });
  assert.is(token.status, 200, token.text);
  const endpoints = await ctx.svc.api('GET', '/webhook-endpoints', { token: token.body.access_token });
  assert.is(endpoints.status, 200, endpoints.text);
  assert.equal(endpoints.body.data, []);
  const gone = await ctx.svc.api('GET', `/webhook-endpoints/${ctx.endpointId}`, {
    token: token.body.access_token,
  });
  assert.is(gone.status, 404);
});

t('backs off on 429 as Retry-After and x-ratelimit-reset say', async (ctx) => {
  let limited: Awaited<ReturnType<TestService['api']>> | undefined;
  for (let i = 0; i < 400 && !limited; i++) {
    const res = await ctx.svc.api('GET', '');
    assert.ok(res.headers.get('x-ratelimit-limit'), 'every partner answer says the limit');
    if (res.status === 429) limited = res;
  }
  assert.ok(limited, 'the budget of RATE_LIMIT_PER_MINUTE ran out');
  const retryAfter = Number(limited.headers.get('retry-after'));
  const reset = Number(limited.headers.get('x-ratelimit-reset'));
  assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
  assert.ok(reset > Date.now() - 1000 && reset <= Date.now() + 61_000, `x-ratelimit-reset ${reset}`);
  assert.ok(Math.abs(reset - Date.now() - retryAfter * 1000) <= 2000, 'both say when to come back');
  assert.is(limited.headers.get('x-ratelimit-remaining'), '0');
  assert.is(limited.body?.error?.code, 'RATE_LIMITED', limited.text);
});

t.run();
