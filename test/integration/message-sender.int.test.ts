// The MessageSender port: one contract suite run against both adapters (the outbox on an event store,
// the WhatsApp Cloud API adapter against a loopback server speaking the Cloud API), then the Cloud
// API's own answers: every error family, retries of what is safe to retry, and lost answers.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { OUTBOX_EVENT, OutboxMessageSender } from '../../src/adapters/message-sender/outbox';
import {
  classifyGraphError,
  lostBehindGateway,
  refusalSummary,
  WhatsAppCloudSender,
} from '../../src/adapters/message-sender/whatsapp-cloud';
import { FixedClock } from '../../src/core/clock';
import { type Delivered, message, messageSenderContract } from '../contracts/message-sender.contract';
import { FakeWhatsApp, GRAPH_ERRORS } from '../helpers/fake-whatsapp';

const clock = new FixedClock('2026-06-02T10:00:00Z');

const outbox = suite('message sender contract: outbox');
messageSenderContract(outbox, {
  async open() {
    const events = new MemoryEventStore({ clock });
    return {
      sender: new OutboxMessageSender(events, clock),
      async delivered(): Promise<Delivered[]> {
        const all = [];
        for await (const e of events.readAll()) all.push(e);
        return all
          .filter((e) => e.type === OUTBOX_EVENT)
          .map((e) => {
            const d = e.data as {
              to: string;
              idempotency_key: string;
              template: { name: string; language: string; parameters: { value: string }[] };
            };
            return {
              to: d.to,
              template: d.template.name,
              language: d.template.language,
              values: d.template.parameters.map((p) => p.value),
              key: d.idempotency_key,
            };
          });
      },
      close: async () => events.close(),
    };
  },
});
outbox.run();

const cloudOptions = (
  fake: FakeWhatsApp,
  extra: Partial<ConstructorParameters<typeof WhatsAppCloudSender>[0]> = {},
) => ({
  accessToken: fake.token,
  baseUrl: fake.url,
  apiVersion: fake.version,
  // A hang bound: an answer the fake gives is never lost to a loaded machine's slowness (a timeout
  // makes the send 'unknown', never retried). The timeout tests set their own, with a fake that never answers.
  timeoutMs: 120_000,
  maxRetries: 2,
  retryBaseMs: 5,
  ...extra,
});

const deliveredBy = (fake: FakeWhatsApp): Delivered[] =>
  fake.acceptedRequests().map((r) => ({
    to: r.body.to,
    template: r.body.template.name,
    language: r.body.template.language.code,
    values: (r.body.template.components?.[0]?.parameters ?? []).map((p: { text: string }) => p.text),
    key: r.body.biz_opaque_callback_data,
  }));

const cloud = suite('message sender contract: WhatsApp Cloud API');
messageSenderContract(cloud, {
  async open() {
    const fake = await new FakeWhatsApp().start();
    return {
      sender: new WhatsAppCloudSender(cloudOptions(fake)),
      delivered: async () => deliveredBy(fake),
      close: () => fake.stop(),
    };
  },
});
cloud.run();

const api = suite<{ fake: FakeWhatsApp; sender: WhatsAppCloudSender }>('WhatsApp Cloud API adapter');
api.before.each(async (ctx) => {
  ctx.fake = await new FakeWhatsApp().start();
  ctx.sender = new WhatsAppCloudSender(cloudOptions(ctx.fake));
});
api.after.each(async ({ fake }) => fake.stop());

api(
  'the request is the Cloud API template message: path, bearer token, named parameters, callback data',
  async ({ fake, sender }) => {
    const r = await sender.send(message({ idempotency_key: 'mc_abc.1' }));
    assert.is(r.status, 'accepted');
    const [req] = fake.requests;
    assert.is(req?.problem, null);
    assert.is(req?.path, '/v21.0/106540352242922/messages');
    assert.equal(req?.body, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '+33612345678',
      type: 'template',
      template: {
        name: 'missed_call',
        language: { code: 'fr' },
        components: [
          {
            type: 'body',
            parameters: [
              { type: 'text', parameter_name: 'guest_name', text: 'Ada' },
              { type: 'text', parameter_name: 'restaurant_name', text: 'Le Demo' },
            ],
          },
        ],
      },
      biz_opaque_callback_data: 'mc_abc.1',
    });
    if (r.status === 'accepted') {
      assert.is(r.provider_message_id, 'wamid.TEST000001');
      assert.is(r.left_machine, true);
    }
  },
);

api('positional templates send parameters without names', async ({ fake, sender }) => {
  const m = message();
  await sender.send({ ...m, template: { ...m.template, form: 'positional' } });
  assert.equal(fake.requests[0]?.body.template.components[0].parameters, [
    { type: 'text', text: 'Ada' },
    { type: 'text', text: 'Le Demo' },
  ]);
});

api(
  'final refusals: invalid recipient (131026) and template paused or missing (132xxx), never retried',
  async ({ fake, sender }) => {
    for (const [script, kind, code] of [
      [GRAPH_ERRORS.undeliverable, 'invalid_recipient', '131026'],
      [GRAPH_ERRORS.templatePaused, 'template_unavailable', '132015'],
      [GRAPH_ERRORS.templateMissing, 'template_unavailable', '132001'],
    ] as const) {
      const before = fake.requests.length;
      fake.script.push(script);
      const r = await sender.send(message());
      assert.equal(
        {
          status: r.status,
          kind: r.status === 'refused' ? r.kind : null,
          code: r.status === 'refused' ? r.code : null,
        },
        { status: 'refused', kind, code },
      );
      assert.is(fake.requests.length - before, 1, 'not retried');
    }
  },
);

api(
  'rate limits (130429, 131056) and provider failures (131016, 5xx) are retried, then refused',
  async ({ fake, sender }) => {
    fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.pairRateLimited);
    const ok = await sender.send(message());
    assert.is(ok.status, 'accepted', 'third try accepted');
    assert.is(fake.requests.length, 3);
    fake.script.push(
      GRAPH_ERRORS.serviceUnavailable,
      GRAPH_ERRORS.serviceUnavailable,
      GRAPH_ERRORS.serviceUnavailable,
    );
    const failed = await sender.send(message());
    assert.is(failed.status, 'refused');
    if (failed.status === 'refused') assert.equal([failed.kind, failed.code], ['unavailable', '131016']);
    assert.is(fake.requests.length, 6, 'one try and two retries');
    assert.is(fake.accepted, 1);
  },
);

api(
  'an expired token (190) is an auth refusal, not retried; a wrong token is refused by the server as auth too',
  async ({ fake }) => {
    fake.script.push(GRAPH_ERRORS.authExpired);
    const sender = new WhatsAppCloudSender(cloudOptions(fake));
    const r = await sender.send(message());
    assert.ok(r.status === 'refused' && r.kind === 'auth' && r.code === '190');
    const wrong = new WhatsAppCloudSender(cloudOptions(fake, { accessToken: 'wrong-token-123' }));
    const w = await wrong.send(message());
    assert.ok(w.status === 'refused' && w.kind === 'auth');
    assert.is(fake.requests.length, 2);
  },
);

api(
  'no sending number configured: refused as not_configured without any request',
  async ({ fake, sender }) => {
    const r = await sender.send(message({ from_phone_number_id: null }));
    assert.ok(r.status === 'refused' && r.kind === 'not_configured');
    assert.is(fake.requests.length, 0);
  },
);

api('nothing listening: unavailable, retried (nothing can have been sent)', async ({ fake }) => {
  const url = fake.url;
  await fake.stop();
  const sender = new WhatsAppCloudSender({ ...cloudOptions(fake), baseUrl: url });
  const r = await sender.send(message());
  assert.ok(r.status === 'refused' && r.kind === 'unavailable', JSON.stringify(r));
  await fake.start(); // after.each stops it again
});

api(
  'sent and never answered (timeout) or cut mid-answer: unknown, and never sent again',
  async ({ fake }) => {
    const sender = new WhatsAppCloudSender(cloudOptions(fake, { timeoutMs: 200 }));
    fake.script.push({ kind: 'silence' });
    const silent = await sender.send(message());
    assert.is(silent.status, 'unknown');
    fake.script.push({ kind: 'cut' });
    const cut = await sender.send(message());
    assert.is(cut.status, 'unknown');
    assert.is(fake.requests.length, 2, 'no retry after a lost answer');
  },
);

api(
  "a gateway's 502 or 504 without WhatsApp's error: unknown (the request may have been accepted behind it), never sent again",
  async ({ fake, sender }) => {
    for (const status of [502, 504]) {
      const before = fake.requests.length;
      fake.script.push({ kind: 'raw', status, body: `<html><body>${status} Gateway</body></html>` });
      const r = await sender.send(message());
      assert.is(r.status, 'unknown', `${status}: ${JSON.stringify(r)}`);
      assert.is(fake.requests.length - before, 1, `${status}: no retry after a lost answer`);
    }
    // WhatsApp's own refusal through a 5xx (a Graph error in the body) and a gateway's 503 (not
    // forwarded) are refusals: retried, and the retry is sent.
    fake.script.push(
      { kind: 'error', status: 502, code: 131000, message: 'Something went wrong' },
      { kind: 'raw', status: 503, body: 'Service Unavailable' },
    );
    const retried = await sender.send(message());
    assert.is(retried.status, 'accepted', JSON.stringify(retried));
    assert.is(fake.accepted, 1);
  },
);

api(
  'an answer that trickles (a byte now and then, never ending) is given up at the timeout: unknown',
  async ({ fake }) => {
    const sender = new WhatsAppCloudSender(cloudOptions(fake, { timeoutMs: 300 }));
    fake.script.push({ kind: 'trickle', everyMs: 50 });
    // The idle timeout alone never fires here: the report waited as long as the server kept sending.
    const r = await Promise.race([
      sender.send(message()),
      new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 60_000).unref()),
    ]);
    assert.is.not(r, 'still waiting');
    assert.is((r as { status: string }).status, 'unknown');
    assert.is(fake.requests.length, 1, 'no retry after a lost answer');
  },
);

api(
  'the service stopping (signal) cuts a send waiting for its answer: unknown, never sent again',
  async ({ fake }) => {
    const stopping = new AbortController();
    // Only the stop can end this send: its timeout is far away.
    const sender = new WhatsAppCloudSender(
      cloudOptions(fake, { timeoutMs: 600_000, signal: stopping.signal }),
    );
    fake.script.push({ kind: 'silence' });
    const sending = sender.send(message());
    for (const until = Date.now() + 120_000; fake.requests.length < 1; ) {
      if (Date.now() > until) throw new Error('the request never arrived');
      await new Promise((r) => setTimeout(r, 10));
    }
    stopping.abort();
    const r = await sending;
    assert.ok(r.status === 'unknown' && /stopping/.test(r.message), JSON.stringify(r));
    assert.is(fake.requests.length, 1, 'no retry after a lost answer');
  },
);

api('the service stopping: no retry after a refusal, and nothing sent once stopped', async ({ fake }) => {
  const stopping = new AbortController();
  // The stop begins as the adapter is about to wait before its retry (it warns then).
  const logger = { warn: () => stopping.abort() };
  const sender = new WhatsAppCloudSender(
    cloudOptions(fake, { retryBaseMs: 600_000, signal: stopping.signal, logger }),
  );
  fake.script.push(GRAPH_ERRORS.rateLimited);
  const refused = await sender.send(message());
  assert.ok(refused.status === 'refused' && refused.kind === 'rate_limited', JSON.stringify(refused));
  assert.is(fake.requests.length, 1, 'the retry is not made once the service stops');
  const after = await sender.send(message());
  assert.ok(after.status === 'refused' && after.kind === 'unavailable', JSON.stringify(after));
  assert.is(fake.requests.length, 1, 'nothing is sent once the service stopped');
});

api(
  'a refusal retried to the end: its log lines name the attempt, and only those a retry follows say so',
  async ({ fake }) => {
    const lines: { fields: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      warn: (...args: unknown[]) =>
        void lines.push({ fields: args[0] as Record<string, unknown>, msg: String(args[1]) }),
    };
    const sender = new WhatsAppCloudSender(cloudOptions(fake, { logger }));
    fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.rateLimited);
    const m = message();
    const refused = await sender.send(m);
    assert.ok(refused.status === 'refused' && refused.kind === 'rate_limited', JSON.stringify(refused));
    assert.is(fake.requests.length, 3);
    assert.equal(
      lines.map((l) => [l.fields.attempt, l.fields.idempotency_key, /retrying$/.test(l.msg)]),
      [
        [1, m.idempotency_key, true],
        [2, m.idempotency_key, true],
        [3, m.idempotency_key, false],
      ],
    );
    assert.match(lines[2]?.msg ?? '', /no retry left/);
    assert.not.ok(JSON.stringify(lines).includes(m.to), 'never the number');
  },
);

api('classifyGraphError maps the documented codes and HTTP statuses', () => {
  const c = (status: number, code?: number, message?: string) =>
    classifyGraphError(status, code === undefined ? undefined : { code, ...(message ? { message } : {}) });
  assert.is(c(400, 131026), 'invalid_recipient');
  assert.is(c(400, 131030), 'invalid_recipient');
  assert.is(c(400, 100, 'Invalid parameter: to'), 'invalid_recipient');
  assert.is(c(400, 132000), 'template_unavailable');
  assert.is(c(400, 132016), 'template_unavailable');
  assert.is(c(400, 80007), 'rate_limited');
  assert.is(c(400, 4), 'rate_limited');
  assert.is(c(429), 'rate_limited');
  assert.is(c(401, 190), 'auth');
  assert.is(c(403, 200), 'auth');
  assert.is(c(403), 'auth');
  assert.is(c(400, 133010), 'not_configured');
  // A sending number id WhatsApp does not know (Graph's "Object with ID … does not exist").
  assert.is(
    classifyGraphError(400, {
      code: 100,
      error_subcode: 33,
      message:
        "Unsupported post request. Object with ID '106540352242922' does not exist, cannot be loaded due to missing permissions, or does not support this operation",
    }),
    'not_configured',
  );
  assert.is(c(500, 131000), 'unavailable');
  assert.is(c(502), 'unavailable');
  assert.is(lostBehindGateway(504, undefined), true);
  assert.is(lostBehindGateway(502, { message: 'Bad Gateway' }), true);
  assert.is(lostBehindGateway(502, { code: 131000 }), false);
  assert.is(lostBehindGateway(503, undefined), false);
});

api(
  "a refusal keeps WhatsApp's status and codes, never its text (it may echo the number or the message)",
  async ({ fake, sender }) => {
    fake.script.push({
      kind: 'error',
      status: 400,
      code: 131026,
      subcode: 2494010,
      message: '(#131026) Message undeliverable to +33612345678: "Ada, Le Demo" was not sent',
    });
    const r = await sender.send(message());
    assert.ok(r.status === 'refused' && r.kind === 'invalid_recipient', JSON.stringify(r));
    if (r.status !== 'refused') return;
    assert.is(
      r.message,
      'HTTP 400, WhatsApp error 131026, subcode 2494010, type OAuthException, fbtrace_id AbCdEf',
    );
    assert.not.match(r.message, /612345678|Ada|Demo|undeliverable/);
    // A code that is not a number (not Graph's shape) is not kept either.
    fake.script.push({ kind: 'error', status: 401, code: 'to +33612345678' as unknown as number });
    const odd = await sender.send(message());
    assert.ok(odd.status === 'refused', JSON.stringify(odd));
    assert.not.match(JSON.stringify(odd), /612345678/);
  },
);

api('a refusal summary takes only the shapes Graph gives its codes, type and trace id', () => {
  assert.is(refusalSummary(500, undefined), 'HTTP 500');
  assert.is(
    refusalSummary(400, {
      code: 100,
      type: 'Param +33612345678',
      fbtrace_id: 'to +33 6 12',
      message: '+33612345678',
      error_data: { details: '+33612345678' },
    }),
    'HTTP 400, WhatsApp error 100',
  );
});

api.run();
