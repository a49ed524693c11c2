// At most 20 webhook endpoints per restaurant, decided on the write side (commands/webhook-endpoints/
// limit.ts), through the real server: creates sent together at 19 give exactly one endpoint, a
// deletion (API or dashboard) frees a slot, the dashboard says the limit in its own words, and
// endpoints written before the slot stream existed count.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Browser, formFields, oauthBootstrap, signIn } from '../helpers/oauth';
import { startTestService, type TestResponse, type TestService } from '../helpers/service';

const FRONT = 'couvert_pk_front_desk_limit_0123456789abcdefghijk';
const THIRD = 'couvert_pk_third_rest_limit_0123456789abcdefghijk';
const LIMIT_MESSAGE = 'A restaurant has at most 20 webhook endpoints; delete one first';
const PARALLEL = 8;

interface Ctx {
  svc: TestService;
  b: Browser;
}
const t = suite<Ctx>('webhook endpoint limit', {} as Ctx);

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      { id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
  });
  Object.assign(bootstrap.restaurants[2] as object, {
    api_keys: [
      { id: 'key_third', name: 'Third', token: THIRD, scopes: ['CUSTOMERS_READ', 'WEBHOOKS_WRITE'] },
    ],
  });
  ctx.svc = await startTestService({ bootstrap });
  // A store from before slots: rest_three's endpoints are their own events only, and no endpoint has
  // been created through the service yet (its log is not seeded: the first create seeds it).
  let position: bigint | null = null;
  for (let i = 0; i < 19; i++) {
    const id = `we_old_${i}`;
    const r = await ctx.svc.rt.events.append(
      `webhook-endpoint-${id}`,
      [
        {
          type: 'WebhookEndpointCreated',
          data: {
            endpoint_id: id,
            restaurant_id: 'rest_three',
            credential_id: 'key_third',
            owner: 'key:key_third',
            api_version: 'v1',
            url: `https://example.com/old-${i}`,
            description: null,
            enabled_events: ['*'],
            headers: {},
            disabled: false,
            secret: ctx.svc.rt.secrets.seal('whsec_old'),
            at: ctx.svc.rt.clock.now().toISOString(),
          },
          metadata: { restaurant_id: 'rest_three', actor: 'operator:test' },
        },
      ],
      'no_stream',
    );
    position = r.position;
  }
  await ctx.svc.rt.settle(position);
  ctx.b = new Browser(ctx.svc.url);
  const first = await ctx.b.get('/dashboard/webhooks?restaurant=rest_demo');
  assert.is((await signIn(ctx.b, await ctx.b.get(first.location as string), 'solo@demo.test')).status, 303);
});
t.after(async (ctx) => {
  await ctx.svc?.close();
});

const post = (svc: TestService, path: string, token = FRONT) =>
  svc.api('POST', '/webhook-endpoints', { token, body: { url: `https://example.com/${path}` } });

async function count(svc: TestService, token = FRONT): Promise<number> {
  const res = await svc.api('GET', '/webhook-endpoints?per_page=100', { token });
  assert.is(res.status, 200, res.text);
  return res.body.pagination.total as number;
}

function isLimit(res: { status: number; body: { error?: Record<string, unknown> }; text: string }) {
  assert.is(res.status, 422, res.text);
  const error = res.body.error as { code: string; message: string; details: { reason: string } };
  assert.is(error.code, 'VALIDATION_ERROR');
  assert.is(error.details.reason, 'ENDPOINT_LIMIT_REACHED');
  assert.is(error.message, LIMIT_MESSAGE);
}

/**
 * Sends `PARALLEL` creates together and holds each one's first append (a slot or an endpoint) until all of
 * them have reached it: every request has decided on the same state before any write lands (what
 * requests from several processes, or a slower store, do), so the outcome does not depend on how the
 * server happens to interleave them. The gate opens once; later appends (retries) pass.
 */
async function together(
  svc: TestService,
  send: (i: number) => Promise<TestResponse>,
): Promise<TestResponse[]> {
  const events = svc.rt.events;
  const append = events.append;
  let arrived = 0;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  events.append = async (stream, batch, expected, options) => {
    const endpointWrite = stream.startsWith('webhook-slots-') || stream.startsWith('webhook-endpoint-');
    if (endpointWrite && arrived < PARALLEL) {
      arrived++;
      if (arrived === PARALLEL) open();
      await opened;
    }
    return append.call(events, stream, batch, expected, options);
  };
  try {
    return await Promise.all(Array.from({ length: PARALLEL }, (_, i) => send(i)));
  } finally {
    events.append = append;
  }
}

const alertOf = (html: string) =>
  (/<div class="alert" role="alert"(?: id="[^"]*")?>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '').replace(
    /<[^>]+>/g,
    '',
  );

t(`${PARALLEL} creates sent together at 19 endpoints: exactly one 201, the others 422`, async ({ svc }) => {
  for (let i = 0; i < 19; i++) assert.is((await post(svc, `seq-${i}`)).status, 201);
  const answers = await together(svc, (i) => post(svc, `race-${i}`));
  const created = answers.filter((r) => r.status === 201);
  assert.is(created.length, 1, answers.map((r) => r.status).join(' '));
  for (const r of answers) if (r.status !== 201) isLimit(r);
  assert.is(await count(svc), 20);
});

t('a deletion through the API frees one slot, and only one', async ({ svc }) => {
  isLimit(await post(svc, 'full'));
  const list = await svc.api('GET', '/webhook-endpoints?per_page=100', { token: FRONT });
  const victim = list.body.data[0].id as string;
  const deleted = await svc.api('DELETE', `/webhook-endpoints/${victim}`, { token: FRONT });
  assert.ok(deleted.status < 300, deleted.text);
  const answers = await together(svc, (i) => post(svc, `refill-${i}`));
  assert.is(answers.filter((r) => r.status === 201).length, 1, answers.map((r) => r.status).join(' '));
  for (const r of answers) if (r.status !== 201) isLimit(r);
  assert.is(await count(svc), 20);
});

t(
  'the dashboard at the limit keeps the form, saying why above its button; its deletion frees a slot',
  async ({ svc, b }) => {
    const list = await b.get('/dashboard/webhooks?restaurant=rest_demo');
    const fields = formFields(list.text, '/dashboard/webhooks/create');
    const form = {
      ...fields,
      url: 'https://example.com/dash',
      key_id: 'key_front',
      events_mode: 'all',
      headers: '',
    };
    const refused = await b.post('/dashboard/webhooks/create', form);
    assert.is(refused.status, 400, refused.text.slice(0, 300));
    assert.is(alertOf(refused.text), `${LIMIT_MESSAGE}.`);
    // In the form, just above the button it is about (which names it and takes the focus).
    assert.match(
      refused.text,
      /<div class="alert" role="alert" id="new-form-error">[^<]*<\/div>\s*<button type="submit" class="full" aria-describedby="new-form-error" autofocus>Add the endpoint<\/button>/,
    );
    assert.match(refused.text, /https:\/\/example\.com\/dash/, 'the form keeps what was typed');

    const victim = (await svc.api('GET', '/webhook-endpoints?per_page=100', { token: FRONT })).body.data[0]
      .id as string;
    const detail = await b.get(`/dashboard/webhooks/${victim}?restaurant=rest_demo`);
    const del = await b.post(`/dashboard/webhooks/${victim}/delete`, {
      ...formFields(detail.text, `/dashboard/webhooks/${victim}/delete`),
      confirm: 'yes',
    });
    assert.is(del.status, 303, del.text.slice(0, 300));
    assert.is(await count(svc), 19);
    const made = await b.post('/dashboard/webhooks/create', form);
    assert.is(made.status, 303, made.text.slice(0, 300));
    assert.is(await count(svc), 20);
    isLimit(await post(svc, 'after-dashboard'));
  },
);

t('endpoints written before the limit had a stream of its own count', async ({ svc }) => {
  assert.is(await count(svc, THIRD), 19);
  const answers = await together(svc, (i) => post(svc, `third-${i}`, THIRD));
  assert.is(answers.filter((r) => r.status === 201).length, 1, answers.map((r) => r.status).join(' '));
  for (const r of answers) if (r.status !== 201) isLimit(r);
  assert.is(await count(svc, THIRD), 20);
  // One of the old endpoints deleted: its slot (from the seed) is given back.
  assert.ok((await svc.api('DELETE', '/webhook-endpoints/we_old_0', { token: THIRD })).status < 300);
  assert.is((await post(svc, 'third-after', THIRD)).status, 201);
  isLimit(await post(svc, 'third-full', THIRD));
});

t.run();
