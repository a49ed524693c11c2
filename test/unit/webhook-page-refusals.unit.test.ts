// Where the endpoint page says why an action was refused, rendered directly: next to the button that
// was refused (which names it with aria-describedby and takes the focus), never atop the page. A
// refused migration or rotation comes only from a race (the endpoint deleted meanwhile), which a
// browser test cannot bring about; the browser test covers Send a test (dashboard-webhook-form-errors).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import type { ShellContext } from '../../src/web/pages/dashboard-shell';
import { type EndpointAction, endpointPage } from '../../src/web/pages/webhook-pages';

const t = suite('webhook endpoint page: refusals next to their button');

const shell: ShellContext = {
  restaurants: [{ id: 'rest_demo', name: 'Le Demo' }] as ShellContext['restaurants'],
  restaurant: { id: 'rest_demo', name: 'Le Demo', timezone: 'Europe/Paris' } as ShellContext['restaurant'],
  account: { email: 'manager@demo.test', csrf: 'csrf' },
};

const endpoint: WebhookEndpointDoc = {
  _id: 'we_1',
  restaurant_id: 'rest_demo',
  credential_id: 'key_front',
  owner: 'key:key_front',
  api_version: 'legacy',
  url: 'https://hooks.example.test/couvert',
  description: null,
  enabled_events: ['*'],
  headers: {},
  disabled: false,
  secret: 'sealed',
  previous_secret: null,
  created_at: '2026-11-27T10:00:00.000Z',
  updated_at: '2026-11-27T10:00:00.000Z',
  created_position: '1',
};

const render = (action: EndpointAction | null) =>
  endpointPage(shell, {
    endpoint,
    keyName: 'API key “Front desk”',
    form: { url: endpoint.url, description: '', all: true, events: [], headers: '' },
    deliveries: [],
    notResent: new Map(),
    filter: { status: '', event_type: '' },
    older: null,
    newest: true,
    actionError: action ? { action, message: 'The endpoint changed meanwhile.' } : null,
  });

const ALERT = '<div class="alert" role="alert" id="action-error">The endpoint changed meanwhile.</div>';

for (const [action, card] of [
  ['test', 'ep-url'],
  ['toggle', 'ep-url'],
  ['rotate', 'ep-url'],
  ['delete', 'ep-url'],
  ['migrate', 'migrate'],
] as const) {
  t(`a refused ${action}: said in its card, above its button, which names it and takes the focus`, () => {
    const page = render(action);
    assert.is(page.split('role="alert"').length - 1, 1, 'said once');
    const section = new RegExp(
      `<section class="card[^"]*" aria-labelledby="${card}">[\\s\\S]*?</section>`,
    ).exec(page)?.[0];
    assert.ok(section?.includes(ALERT), `in the ${card} card`);
    const button = new RegExp(
      `<form method="post" action="/dashboard/webhooks/we_1/${action}">[\\s\\S]*?</form>`,
    )
      .exec(page)?.[0]
      .match(/<button [^>]*>/)?.[0];
    assert.match(button ?? '', /aria-describedby="action-error"/);
    assert.match(button ?? '', / autofocus>$/);
    // The alert stands before the button (read first, seen above it when the focus scrolls there).
    assert.ok(page.indexOf(ALERT) < page.indexOf(`action="/dashboard/webhooks/we_1/${action}"`));
    // No other button takes the focus.
    assert.is(page.split(' autofocus').length - 1, 1);
  });
}

t('nothing refused: no alert, no focus taken', () => {
  const page = render(null);
  assert.not.match(page, /role="alert"/);
  assert.not.match(page, /autofocus/);
  assert.not.match(page, /action-error/);
});

t.run();
