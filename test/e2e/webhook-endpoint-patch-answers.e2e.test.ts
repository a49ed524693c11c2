// PATCH /webhook-endpoints/{id}: what each kind of mistake answers, and in which order (the body's 400
// before the path's 404, the path's 404 before the scopes' 422), pinned whole (status, code, message,
// details). The settings' rules are checked in one place, the command's (`checkSettings`); the route
// only parses. No deliveries are made (no webhooks role): the URLs name loopback only.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const RES_ONLY = 'couvert_pk_patch_answers_00000000000000000001';
const OTHER = 'couvert_pk_patch_answers_00000000000000000002';
const NOTHING = 'couvert_pk_patch_answers_00000000000000000003';
const URL = 'http://127.0.0.1:9/hook';

const t = suite<{ svc: TestService; own: string; others: string; blind: string }>(
  'webhooks: PATCH /webhook-endpoints answers',
);
t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: demoBootstrap({}, [
      { id: 'key_res', token: RES_ONLY, scopes: ['WEBHOOKS_WRITE', 'RESERVATIONS_READ'] },
      { id: 'key_other', token: OTHER, scopes: ['WEBHOOKS_WRITE', 'RESERVATIONS_READ'] },
      { id: 'key_nothing', token: NOTHING, scopes: ['WEBHOOKS_WRITE'] },
    ]),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  const create = async (token: string) => {
    const res = await ctx.svc.api('POST', '/webhook-endpoints', { token, body: { url: URL } });
    assert.is(res.status, 201, res.text);
    return res.body.data.id as string;
  };
  ctx.own = await create(RES_ONLY);
  ctx.others = await create(OTHER);
  ctx.blind = await create(NOTHING);
});
t.after(async ({ svc }) => {
  await svc.close();
});

/** The answer without its request id (the rest is what a partner reads). */
const answer = async (svc: TestService, token: string, id: string, body: unknown) => {
  const res = await svc.api('PATCH', `/webhook-endpoints/${id}`, { token, body, anyBody: true });
  const { request_id, ...error } = res.body.error ?? {};
  assert.type(request_id, 'string');
  return { status: res.status, error };
};

const BAD_URL = {
  status: 400,
  error: {
    code: 'VALIDATION_ERROR',
    message: 'The request body is invalid',
    details: {
      issues: [{ path: 'url', code: 'invalid_format', message: 'url must be an https:// or http:// URL' }],
    },
  },
};

t('a malformed setting is 400, for an endpoint of the caller, another credential or none', async (ctx) => {
  const { svc } = ctx;
  for (const id of [ctx.own, ctx.others, 'we_none'])
    assert.equal(await answer(svc, RES_ONLY, id, { url: 'ftp://127.0.0.1/hook' }), BAD_URL, id);
  assert.equal(await answer(svc, RES_ONLY, 'we_none', { url: ` ${URL}` }), {
    status: 400,
    error: {
      code: 'VALIDATION_ERROR',
      message: 'The request body is invalid',
      details: {
        issues: [
          {
            path: 'url',
            code: 'invalid_format',
            message:
              'url must not contain spaces, tabs, line breaks or control characters (percent-encode them)',
          },
        ],
      },
    },
  });
});

t('every malformed setting is named at once: headers and event types', async (ctx) => {
  assert.equal(
    await answer(ctx.svc, RES_ONLY, 'we_none', {
      headers: { 'X-Service-Mine': 'a', Cookie: 'b', 'x-a': 'c', 'X-A': 'd' },
      enabled_events: ['customer.created', 'reservation.made', 'customer.created'],
    }),
    {
      status: 400,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The request body is invalid',
        details: {
          issues: [
            {
              path: 'headers.X-Service-Mine',
              code: 'reserved_header',
              message: 'the X-Service- prefix is reserved for the service',
            },
            {
              path: 'headers.Cookie',
              code: 'reserved_header',
              message: 'hop-by-hop, framing and credential headers cannot be set',
            },
            {
              path: 'headers.X-A',
              code: 'invalid_format',
              message: 'the same header is named twice (names are case-insensitive)',
            },
            {
              path: 'enabled_events.1',
              code: 'invalid_enum',
              message:
                'must be "*" or one of reservation.created, reservation.updated, reservation.canceled, customer.created, customer.updated, customer.deleted, customer.merged',
            },
            { path: 'enabled_events', code: 'invalid_format', message: 'items must be distinct' },
          ],
        },
      },
    },
  );
  assert.equal(await answer(ctx.svc, RES_ONLY, ctx.own, { enabled_events: ['*', 'customer.created'] }), {
    status: 400,
    error: {
      code: 'VALIDATION_ERROR',
      message: 'The request body is invalid',
      details: {
        issues: [{ path: 'enabled_events', code: 'invalid_format', message: '["*"] stands alone' }],
      },
    },
  });
});

t('a malformed setting answers 400 even beside an event type the credential cannot read', async (ctx) => {
  assert.equal(
    await answer(ctx.svc, RES_ONLY, ctx.own, {
      url: 'ftp://127.0.0.1/hook',
      enabled_events: ['customer.created'],
    }),
    BAD_URL,
  );
});

const NOT_FOUND = (id: string) => ({
  status: 404,
  error: { code: 'RESOURCE_NOT_FOUND', message: `webhook endpoint ${id} not found` },
});

t(
  "an event type the credential cannot read: 422 on its own endpoint, 404 on another's or none",
  async (ctx) => {
    const { svc } = ctx;
    const body = { enabled_events: ['reservation.created', 'customer.created'] };
    assert.equal(await answer(svc, RES_ONLY, ctx.own, body), {
      status: 422,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The credential cannot read these event types',
        details: {
          issues: [
            {
              path: 'enabled_events.1',
              code: 'insufficient_scope',
              message: 'customer.created needs CUSTOMERS_READ, which this credential does not hold',
            },
          ],
        },
      },
    });
    assert.equal(await answer(svc, RES_ONLY, ctx.others, body), NOT_FOUND(ctx.others));
    assert.equal(await answer(svc, RES_ONLY, 'we_none', body), NOT_FOUND('we_none'));
    assert.equal(await answer(svc, NOTHING, ctx.blind, { enabled_events: ['*'] }), {
      status: 422,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'The credential cannot read any event type',
        details: {
          issues: [
            {
              path: 'enabled_events',
              code: 'insufficient_scope',
              message: 'this credential can read no event type (RESERVATIONS_READ or CUSTOMERS_READ)',
            },
          ],
        },
      },
    });
    assert.equal(await answer(svc, NOTHING, ctx.own, { enabled_events: ['*'] }), NOT_FOUND(ctx.own));
  },
);

t('a well-formed change of its own endpoint is made, and of no other', async (ctx) => {
  const { svc } = ctx;
  const ok = await svc.api('PATCH', `/webhook-endpoints/${ctx.own}`, {
    token: RES_ONLY,
    body: { description: 'till', enabled_events: ['reservation.created'] },
  });
  assert.is(ok.status, 200, ok.text);
  assert.is(ok.body.data.description, 'till');
  assert.equal(ok.body.data.enabled_events, ['reservation.created']);
  assert.equal(await answer(svc, RES_ONLY, ctx.others, { description: 'mine' }), NOT_FOUND(ctx.others));
  const theirs = await svc.api('GET', `/webhook-endpoints/${ctx.others}`, { token: OTHER });
  assert.is(theirs.body.data.description, null);
});

t.run();
