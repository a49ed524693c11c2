// Dashboard: webhook endpoints and their deliveries, through the webhooks module's commands with the
// manager as actor. Every id in a URL or a form is checked against the restaurant the manager chose
// (and manages): another restaurant's endpoint or delivery answers the 404 page.

import { deliveryType } from '../../../commands/webhook-deliveries/events';
import {
  erasedAnswers,
  resendDelivery,
  resendRefusals,
  testWebhookEndpoint,
} from '../../../commands/webhook-deliveries/handler';
import {
  previousSecretSigns,
  readableTypes,
  refuseMalformedSettings,
} from '../../../commands/webhook-endpoints/decide';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  lastEndpointChange,
  loadWebhookEndpoint,
  migrateWebhookEndpoint,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from '../../../commands/webhook-endpoints/handler';
import { maskedHeaders } from '../../../commands/webhook-endpoints/header-secrets';
import { MAX_ENDPOINTS_PER_RESTAURANT } from '../../../commands/webhook-endpoints/limit';
import { API_KEYS, type ApiKeyDoc } from '../../../projections/api-keys';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../../projections/webhook-endpoints';
import { keyWithdrawn } from '../../../queries/api-keys';
import { barredByApiOption, barredCredentials } from '../../../queries/oauth';
import {
  DELIVERY_EVENT_TYPES,
  failingStreak,
  getDelivery,
  getEndpoint,
  listDeliveries,
  ownerOf,
} from '../../../queries/webhooks';
import { ApiError, BusinessRuleError, type Issue } from '../../core/errors';
import type { Runtime } from '../../runtime';
import { deliveryCursor, readDeliveryCursor } from '../../web/delivery-cursor';
import { putFlash, takeFlash } from '../../web/flash';
import { isManager, type Manager, managerForAction, managerForPage } from '../../web/manager';
import { type ConfirmTone, confirmPage, sectionPath } from '../../web/pages/dashboard-shell';
import {
  type DeliveryFilter,
  type EndpointAction,
  type EndpointField,
  type EndpointForm,
  emptyEndpointForm,
  endpointPage,
  endpointPath,
  endpointsPage,
  type FormErrors,
} from '../../web/pages/webhook-pages';
import { notYours, page, renderPageError, seeOther } from '../../web/respond';
import { restaurantKey } from '../../web/restaurant-keys';
import { sentenceStart } from '../../web/sentence';
import { type AnyRoute, defineRoute, PUBLIC } from '../route';
import { enums, obj, optional, str } from '../schema';
import { form, many } from './dashboard-api-keys';
import { DELIVERY_STATUSES } from './webhook-schemas';

const BASE = '/dashboard/webhooks';
const PAGE_SIZE = 25;
const ID = str({ min: 1, max: 64 });

const settingsBody = {
  url: optional(str({ max: 2048 })),
  description: optional(str({ max: 500 })),
  events_mode: optional(str({ max: 8 })),
  headers: optional(str({ max: 20_000 })),
};

/** The keys an endpoint may be given: those authentication lets in (keyWithdrawn: not cut off either). */
async function keysOf(rt: Runtime, restaurantId: string) {
  const keys = await rt.docs
    .collection<ApiKeyDoc>(API_KEYS)
    .find({ restaurant_id: restaurantId, revoked_at: null }, { sort: { created_at: 1, _id: 1 } });
  return keys.filter((k) => !keyWithdrawn(k));
}

/** An endpoint of the manager's restaurant, or the 404 page. */
async function endpointOf(rt: Runtime, m: Manager, id: string): Promise<WebhookEndpointDoc> {
  try {
    return await getEndpoint(rt.docs, { restaurantId: m.restaurant._id, owner: null }, id);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw notYours();
    throw err;
  }
}

function formOf(body: Record<string, unknown>): EndpointForm {
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  return {
    url: s(body.url).trim(),
    description: s(body.description).trim(),
    key_id: s(body.key_id),
    all: body.events_mode !== 'some',
    events: many(body.events),
    headers: s(body.headers),
  };
}

const formOfEndpoint = (e: WebhookEndpointDoc): EndpointForm => ({
  url: e.url,
  description: e.description ?? '',
  all: e.enabled_events.includes('*'),
  events: e.enabled_events.filter((t) => t !== '*'),
  // Values masked: a line left as it is keeps its value when saved (header-secrets.ts).
  headers: Object.entries(maskedHeaders(e.headers))
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n'),
});

/**
 * The form's settings as the commands take them, and what is wrong with them by field (a line that is
 * not `Name: value`, a missing URL or event choice): each is said next to its field.
 */
function settingsOf(f: EndpointForm): {
  settings: {
    url: string;
    description: string | null;
    enabled_events: string[];
    headers: Record<string, string>;
  };
  problems: FormErrors | null;
} {
  const headers: Record<string, string> = {};
  const problems: FormErrors = {};
  for (const line of f.headers.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const i = line.indexOf(':');
    if (i <= 0) {
      problems.headers ??= `Custom header “${line.slice(0, 60)}” is not written as Name: value.`;
      continue;
    }
    const name = line.slice(0, i).trim();
    // Names are case-insensitive: a second line for the same one would silently replace the first.
    if (Object.keys(headers).some((n) => n.toLowerCase() === name.toLowerCase())) {
      problems.headers ??= `Custom header “${name.slice(0, 60)}” is named twice: keep one line for it.`;
      continue;
    }
    headers[name] = line.slice(i + 1).trim();
  }
  if (!f.url) problems.url = 'Enter the URL to send events to.';
  if (!f.all && !f.events.length) problems.events = 'Choose at least one event, or every event.';
  return {
    settings: {
      url: f.url,
      description: f.description || null,
      enabled_events: f.all ? ['*'] : f.events,
      headers,
    },
    problems: Object.keys(problems).length ? problems : null,
  };
}

/** A command's refusal in words a manager reads (never a stack or the input echoed back). */
function refusal(err: unknown): string | null {
  if (!(err instanceof ApiError) || err.status >= 500) return null;
  const issues = err.details?.issues as Issue[] | undefined;
  return issues?.length ? issues.map((i) => i.message).join('; ') : err.message;
}

/** The field of the form an issue's path is about (`url`, `enabled_events.2`, `headers.X-Till`). */
const fieldOf = (path: string): EndpointField =>
  path === 'url'
    ? 'url'
    : path.startsWith('enabled_events')
      ? 'events'
      : path.startsWith('headers')
        ? 'headers'
        : 'form';

/** An issue's message as a sentence of the form (the API's start with the field's name). */
export function issueText(i: Issue): string {
  if (i.path === 'url' && i.message.startsWith('url ')) return `The URL ${i.message.slice(4)}`;
  if (i.path.startsWith('headers.')) return `Custom header “${i.path.slice(8, 68)}”: ${i.message}`;
  return sentenceStart(i.message);
}

/**
 * A command's refusal of a form's settings, by field (said next to each), or null when it is not one
 * to show (a 5xx, not an ApiError).
 */
function formRefusal(err: unknown): FormErrors | null {
  if (!(err instanceof ApiError) || err.status >= 500) return null;
  const issues = err.details?.issues as Issue[] | undefined;
  if (!issues?.length) return { form: err.message };
  const by: Partial<Record<EndpointField, string[]>> = {};
  for (const i of issues) {
    const field = fieldOf(i.path);
    by[field] = [...(by[field] ?? []), issueText(i)];
  }
  const out: FormErrors = {};
  for (const [field, texts] of Object.entries(by)) {
    const text = texts.join('; ');
    out[field as EndpointField] = /[.!?]$/.test(text) ? text : `${text}.`;
  }
  return out;
}

/**
 * Everything wrong with the form at once: its own problems and, for the other fields, what the
 * command's rules would refuse (a URL not https, a reserved header), so one round trip says it all.
 */
function allProblems(
  rt: Runtime,
  f: EndpointForm,
): { settings: ReturnType<typeof settingsOf>['settings']; problems: FormErrors | null } {
  const { settings, problems } = settingsOf(f);
  if (!problems) return { settings, problems };
  let rules: FormErrors = {};
  try {
    refuseMalformedSettings(settings, rt.config.webhookAllowPrivateTargets);
  } catch (err) {
    rules = formRefusal(err) ?? {};
    delete rules.form;
  }
  return { settings, problems: { ...rules, ...problems } };
}

async function listPage(
  rt: Runtime,
  m: Manager,
  o: { form?: EndpointForm; notice?: string | null; alert?: string | null },
  status = 200,
) {
  const [endpoints, keys] = await Promise.all([
    rt.docs
      .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
      .find({ restaurant_id: m.restaurant._id }, { sort: { created_at: 1, _id: 1 } }),
    keysOf(rt, m.restaurant._id),
  ]);
  const keyNames = new Map(
    keys.map((k) => [k._id, k.type === 'OAUTH' ? (k.application?.name ?? k.name) : k.name]),
  );
  const eligible = keys.filter((k) => k.type === 'API_KEY' && readableTypes(k.scopes).length > 0);
  // A third-party application's endpoints receive nothing while the API option is off (the publisher's rule).
  // Asked once for the page (one lookup of the applications concerned), not once per key.
  const barred = await barredCredentials(rt.docs, keys, m.restaurant);
  const paused = new Map<string, string>();
  for (const k of keys) if (barred.has(k._id)) paused.set(k._id, keyNames.get(k._id) ?? k.name);
  return page(
    endpointsPage(m.shell, {
      endpoints,
      keys: eligible,
      keyNames,
      paused,
      form: o.form ?? emptyEndpointForm,
      notice: o.notice,
      alert: o.alert,
    }),
    {},
    status,
  );
}

interface DetailExtras {
  notice?: string | null;
  alert?: string | null;
  actionError?: { action: EndpointAction; message: string } | null;
  /** A refused resend: said in the delivery's item when it is listed, else atop the page. */
  resendError?: { delivery: string; message: string } | null;
  secret?: string | null;
  form?: EndpointForm;
  test?: Parameters<typeof endpointPage>[1]['test'];
  filter?: DeliveryFilter;
  before?: string;
}

async function detailPage(
  rt: Runtime,
  m: Manager,
  endpoint: WebhookEndpointDoc,
  x: DetailExtras,
  status = 200,
) {
  const filter = x.filter ?? { status: '', event_type: '' };
  const after = (x.before && readDeliveryCursor(x.before)) || undefined;
  const { items, hasMore } = await listDeliveries(
    rt.docs,
    endpoint._id,
    {
      status: filter.status || undefined,
      event_type: filter.event_type || undefined,
      limit: PAGE_SIZE,
      after,
    },
    rt.clock.now(),
  );
  const failing = await failingStreak(rt.docs, endpoint._id, rt.clock.now());
  const last = items.at(-1);
  const older =
    hasMore && last
      ? `${BASE}/${encodeURIComponent(endpoint._id)}?${new URLSearchParams({ restaurant: m.restaurant._id, status: filter.status, event_type: filter.event_type, before: deliveryCursor(last) })}`
      : null;
  const key = await rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });
  const keyName = key
    ? key.type === 'OAUTH'
      ? `${key.application?.name ?? key.name} (connected application)`
      : `API key “${key.name}”`
    : endpoint.owner;
  return page(
    endpointPage(m.shell, {
      // A previous secret past its 24 hours signs nothing (the publisher drops it): not listed.
      endpoint: previousSecretSigns(endpoint, rt.clock.now())
        ? endpoint
        : { ...endpoint, previous_secret: null },
      keyName,
      pausedApp:
        key?.type === 'OAUTH' && (await barredByApiOption(rt.docs, key, m.restaurant))
          ? (key.application?.name ?? key.name)
          : null,
      form: x.form ?? formOfEndpoint(endpoint),
      deliveries: items,
      notResent: await resendRefusals(rt, endpoint, items),
      erasedAnswers: await erasedAnswers(rt, items),
      failing,
      filter,
      older,
      newest: !after,
      notice: x.notice,
      alert:
        x.resendError && !items.some((d) => d._id === x.resendError?.delivery)
          ? x.resendError.message
          : x.alert,
      resendError:
        x.resendError && items.some((d) => d._id === x.resendError?.delivery) ? x.resendError : null,
      actionError: x.actionError,
      secret: x.secret,
      test: x.test,
    }),
    {},
    status,
  );
}

const NOTICES = new Map<string, string>([
  ['created', 'The endpoint is added. Send a test to check that it answers.'],
  ['rotated', 'The secret is rotated. The previous one keeps signing for 24 hours.'],
  ['saved', 'Changes saved.'],
  ['enabled', 'The endpoint is enabled: events are sent to it again.'],
  [
    'disabled',
    'The endpoint is disabled: nothing is sent to it until it is enabled. Deliveries waiting for a retry are canceled; resend them once it is enabled.',
  ],
  ['migrated', 'The endpoint now receives the v1 format.'],
  ['resent', 'The delivery is sent again: its new attempts appear below.'],
  ['deleted', 'The endpoint is deleted: nothing more is sent to it.'],
]);

/**
 * Whether the endpoint is as the notice `done` says (a link cannot announce a change that did not
 * happen): a creation, a save, an enabling or a disabling only when it is the endpoint's last change and
 * this manager made it; a rotation while its previous secret still signs; a resend of the delivery
 * named, of this endpoint. Any other value says nothing.
 */
async function holds(
  rt: Runtime,
  m: Manager,
  e: WebhookEndpointDoc,
  done: string,
  deliveryId: string | undefined,
): Promise<boolean> {
  switch (done) {
    case 'migrated':
      return e.api_version !== 'legacy';
    case 'rotated':
      return previousSecretSigns(e, rt.clock.now());
    case 'resent': {
      const d = deliveryId ? await deliveryOf(rt, e, deliveryId) : null;
      return d !== null && !d.test && d.series_start > 1;
    }
    case 'created':
    case 'saved':
    case 'enabled':
    case 'disabled': {
      const last = await lastEndpointChange(rt, e._id);
      if (!last || last.actor !== m.meta.actor) return false;
      if (done === 'created') return last.type === 'WebhookEndpointCreated';
      if (last.type !== 'WebhookEndpointUpdated') return false;
      if (done === 'saved') return true;
      return 'disabled' in last.changes && e.disabled === (done === 'disabled');
    }
    default:
      return false;
  }
}

/** A delivery of this endpoint in the 30-day history, or null. */
async function deliveryOf(rt: Runtime, e: WebhookEndpointDoc, id: string) {
  try {
    return await getDelivery(rt.docs, e._id, id, rt.clock.now());
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** A test delivery's outcome, as the page shows it after the test's redirect. */
async function testOutcome(rt: Runtime, e: WebhookEndpointDoc, id: string): Promise<DetailExtras['test']> {
  const d = await deliveryOf(rt, e, id);
  const a = d?.test ? d.attempts[0] : undefined;
  if (!d || !a) return null;
  return {
    ok: d.status === 'succeeded',
    at: a.at,
    status: a.status_code,
    error: a.error,
    duration: a.duration_ms,
    excerpt: a.response_excerpt ?? null,
  };
}

const ACTIONS = ['edit', 'toggle', 'rotate', 'test', 'migrate', 'delete'] as const;

export const dashboardWebhookRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: BASE,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardWebhooks',
    summary: 'Webhook endpoints of a restaurant the signed-in user manages',
    tag: 'OAuth',
    access: PUBLIC,
    query: obj(
      {
        restaurant: optional(str({ max: 64 })),
        done: optional(str({ max: 16 })),
        endpoint: optional(ID),
      },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      // Only a deletion redirects here, naming the endpoint: said only if that endpoint of this
      // restaurant is indeed deleted (any other notice a link names would announce nothing true).
      let deleted = false;
      if (query.done === 'deleted' && query.endpoint) {
        const state = await loadWebhookEndpoint(rt, query.endpoint);
        deleted = state.deleted && state.endpoint?.restaurant_id === m.restaurant._id;
      }
      return listPage(rt, m, { notice: deleted ? (NOTICES.get('deleted') ?? null) : null });
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/create`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardCreateWebhookEndpoint',
    summary: 'Add a webhook endpoint (v1; its signing secret is shown once)',
    tag: 'OAuth',
    access: PUBLIC,
    body: form({ ...settingsBody, key_id: optional(ID) }),
    bodyRequired: true,
    responses: { 303: { description: 'To the endpoint, where its secret is shown once' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const f = formOf(body);
      // Refused: the form again as sent, each reason next to its field (not atop the page).
      const again = (errors: FormErrors) => listPage(rt, m, { form: { ...f, errors } }, 400);
      const { settings, problems } = allProblems(rt, f);
      if (!f.key_id) return again({ ...problems, key: 'Choose the API key the endpoint belongs to.' });
      if (problems) return again(problems);
      const key = await restaurantKey(rt, m.restaurant._id, f.key_id);
      if (!key) throw notYours();
      // This restaurant's key, revoked meanwhile (another tab): the form is kept, with what to do.
      if (keyWithdrawn(key))
        return again({
          key: `The API key chosen is ${key.revoked_at ? 'revoked' : 'cut off'}: choose another.`,
        });
      try {
        const out = await createWebhookEndpoint(
          rt,
          {
            ...settings,
            restaurantId: m.restaurant._id,
            credential: { id: key._id, scopes: key.scopes, owner: ownerOf(key) },
          },
          m.meta,
        );
        await rt.settle(out.position);
        await putFlash(rt, m.session, {
          label: 'Signing secret',
          value: out.secret,
          for: `${BASE}/${out.endpointId}`,
        });
        return seeOther(`${endpointPath(out.endpointId, m.restaurant._id)}&done=created`);
      } catch (err) {
        // The limit is the command's (commands/webhook-endpoints/limit.ts), said in the page's words.
        if (err instanceof BusinessRuleError && err.reason === 'ENDPOINT_LIMIT_REACHED')
          return again({
            form: `A restaurant has at most ${MAX_ENDPOINTS_PER_RESTAURANT} webhook endpoints; delete one first.`,
          });
        const errors = formRefusal(err);
        if (errors) return again(errors);
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/{id}`,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardWebhookEndpoint',
    summary: 'A webhook endpoint and its deliveries of the last 30 days',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: ID }),
    query: obj(
      {
        restaurant: optional(str({ max: 64 })),
        done: optional(str({ max: 16 })),
        delivery: optional(ID),
        status: optional(str({ max: 16 })),
        event_type: optional(str({ max: 64 })),
        before: optional(str({ max: 200 })),
      },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const endpoint = await endpointOf(rt, m, params.id);
      const flash = await takeFlash(rt, m.session, `${BASE}/${endpoint._id}`);
      // A test's outcome is read from its delivery (the action redirects here: a reload sends nothing).
      const test =
        query.done === 'tested' && query.delivery ? await testOutcome(rt, endpoint, query.delivery) : null;
      const notice =
        query.done && NOTICES.has(query.done) && (await holds(rt, m, endpoint, query.done, query.delivery))
          ? (NOTICES.get(query.done) ?? null)
          : null;
      // A test delivery's type is the one its body carried, as the API names it (TEST_EVENT_TYPE); a
      // link from before, with the read model's `test`, reads the same. A type or status the history
      // cannot hold (a typo in a link) is said on the page, as the API answers 400, not an empty list.
      const eventType = deliveryType(query.event_type ?? '', 'shown');
      const status = query.status ?? '';
      const wrong = [
        eventType && !DELIVERY_EVENT_TYPES.includes(eventType)
          ? `No event type is called “${eventType}”: choose one in the list.`
          : '',
        status && !(DELIVERY_STATUSES as readonly string[]).includes(status)
          ? `No delivery status is called “${status}”: choose one in the list.`
          : '',
      ].filter(Boolean);
      // The link to older deliveries holds a value the page never writes: said (400, as the filters'),
      // not listed from the newest as if the newest were asked for.
      const damaged = query.before !== undefined && !readDeliveryCursor(query.before);
      const alert =
        [
          wrong.length ? `${wrong.join(' ')} The deliveries below are not filtered by it.` : '',
          damaged
            ? 'The link to older deliveries is damaged (before= takes the time and id of a delivery listed, as the page writes them): the newest deliveries are shown.'
            : '',
        ]
          .filter(Boolean)
          .join(' ') || null;
      return detailPage(
        rt,
        m,
        endpoint,
        {
          secret: flash?.value ?? null,
          notice,
          test,
          alert,
          filter: {
            status: DELIVERY_STATUSES.some((s) => s === status) ? status : '',
            event_type: DELIVERY_EVENT_TYPES.includes(eventType) ? eventType : '',
          },
          before: query.before,
        },
        alert ? 400 : 200,
      );
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/{id}/{action}`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardWebhookEndpointAction',
    summary: 'Edit, disable or enable, rotate the secret of, test, migrate or delete a webhook endpoint',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: ID, action: enums(ACTIONS) }),
    body: form({ ...settingsBody, confirm: optional(str({ max: 8 })) }),
    bodyRequired: true,
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'Back to the endpoint' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const endpoint = await endpointOf(rt, m, params.id);
      const r = m.restaurant._id;
      const back = (done: string) => seeOther(`${endpointPath(endpoint._id, r)}&done=${done}`);
      const key = await rt.docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: endpoint.credential_id });
      const scopes = key && !keyWithdrawn(key) ? key.scopes : [];
      const confirm = (title: string, warning: string, button: string, tone?: ConfirmTone) =>
        page(
          confirmPage(m.shell, {
            section: 'webhooks',
            title,
            warning,
            tone,
            action: `${BASE}/${encodeURIComponent(endpoint._id)}/${params.action}`,
            fields: { restaurant_id: r },
            button,
            cancel: endpointPath(endpoint._id, r),
          }),
        );
      try {
        switch (params.action) {
          case 'edit': {
            const f = formOf(body);
            const { settings, problems } = allProblems(rt, f);
            if (problems) return detailPage(rt, m, endpoint, { form: { ...f, errors: problems } }, 400);
            const out = await updateWebhookEndpoint(rt, r, endpoint._id, settings, scopes, m.meta, {
              allowUnreadable: endpoint.api_version === 'legacy',
            });
            await rt.settle(out.position);
            // Nothing changed (the settings were already these): no notice claims a save.
            return out.appended.length ? back('saved') : seeOther(endpointPath(endpoint._id, r));
          }
          case 'toggle': {
            const out = await updateWebhookEndpoint(
              rt,
              r,
              endpoint._id,
              { disabled: !endpoint.disabled },
              scopes,
              m.meta,
            );
            await rt.settle(out.position);
            return back(endpoint.disabled ? 'enabled' : 'disabled');
          }
          case 'rotate': {
            if (body.confirm !== 'yes')
              return confirm(
                'Rotate the signing secret?',
                `A new secret is made for ${endpoint.url} and shown once. The current one keeps signing beside it for 24 hours, so the receiving program can switch without losing a delivery.`,
                'Rotate the secret',
                'neutral',
              );
            const out = await rotateWebhookSecret(rt, r, endpoint._id, undefined, m.meta);
            await rt.settle(out.position);
            await putFlash(rt, m.session, {
              label: 'Signing secret',
              value: out.secret,
              for: `${BASE}/${endpoint._id}`,
            });
            return back('rotated');
          }
          case 'test': {
            // Answered with a redirect to the page showing the outcome: reloading it sends no new test.
            const out = await testWebhookEndpoint(rt, endpoint, m.meta);
            await rt.settle(out.position);
            return seeOther(
              `${endpointPath(endpoint._id, r)}&done=tested&delivery=${encodeURIComponent(out.deliveryId)}`,
            );
          }
          case 'migrate': {
            if (endpoint.api_version !== 'legacy') return back('migrated');
            if (body.confirm !== 'yes')
              return confirm(
                'Migrate this endpoint to v1?',
                `From now on ${endpoint.url} receives the v1 event format instead of the legacy RESERVATION_UPDATED; legacy deliveries still waiting for a retry are canceled. This is final: it cannot be switched back. Make sure the receiving program reads v1 first.`,
                'Migrate to v1 (final)',
                'caution',
              );
            const out = await migrateWebhookEndpoint(rt, r, endpoint._id, m.meta);
            await rt.settle(out.position);
            return back('migrated');
          }
          case 'delete': {
            if (body.confirm !== 'yes')
              return confirm(
                'Delete this endpoint?',
                `Nothing more is sent to ${endpoint.url}, retries included, and its delivery history goes with it. This cannot be undone.`,
                'Delete the endpoint',
              );
            const out = await deleteWebhookEndpoint(rt, r, endpoint._id, 'DELETED', m.meta);
            await rt.settle(out.position);
            return seeOther(
              `${sectionPath('webhooks', r)}&done=deleted&endpoint=${encodeURIComponent(endpoint._id)}`,
            );
          }
        }
      } catch (err) {
        // Said where it happened: in the edit form next to its field, or next to the action's button.
        if (params.action === 'edit') {
          const errors = formRefusal(err);
          if (errors) return detailPage(rt, m, endpoint, { form: { ...formOf(body), errors } }, 400);
          throw err;
        }
        const text = refusal(err);
        if (text)
          return detailPage(
            rt,
            m,
            endpoint,
            { actionError: { action: params.action, message: /[.!?]$/.test(text) ? text : `${text}.` } },
            400,
          );
        throw err;
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/{id}/deliveries/{delivery}/resend`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardResendWebhookDelivery',
    summary: 'Send a delivery again',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: ID, delivery: ID }),
    body: form({}),
    bodyRequired: true,
    responses: { 303: { description: 'Back to the endpoint' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const endpoint = await endpointOf(rt, m, params.id);
      let delivery: Awaited<ReturnType<typeof getDelivery>>;
      try {
        delivery = await getDelivery(rt.docs, endpoint._id, params.delivery, rt.clock.now());
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) throw notYours();
        throw err;
      }
      try {
        const out = await resendDelivery(rt, delivery, endpoint, m.meta);
        await rt.settle(out.position);
      } catch (err) {
        // Said as the page says it next to the delivery (in a manager's words), else the API's reason.
        const text = (await resendRefusals(rt, endpoint, [delivery])).get(delivery._id) ?? refusal(err);
        if (text)
          return detailPage(
            rt,
            m,
            endpoint,
            { resendError: { delivery: delivery._id, message: text.endsWith('.') ? text : `${text}.` } },
            409,
          );
        throw err;
      }
      return seeOther(
        `${endpointPath(endpoint._id, m.restaurant._id)}&done=resent&delivery=${encodeURIComponent(delivery._id)}`,
      );
    },
  }),
];
