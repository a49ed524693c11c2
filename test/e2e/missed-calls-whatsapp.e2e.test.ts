// POST /missed-calls with the WhatsApp Cloud API configured (WHATSAPP_* pointing at a loopback server
// that speaks the Cloud API): what reaches WhatsApp, the 502 and its safe retry, and how each of the
// provider's error answers ends a call.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { missedCallStream } from '../../commands/missed-calls/events';
import { storedEvents } from '../../src/privacy/sealing-event-store';
import { runCli } from '../helpers/cli-in-process';
import { FakeWhatsApp, GRAPH_ERRORS } from '../helpers/fake-whatsapp';
import { MC_TOKENS, type MissedCallService, report, startMissedCallService } from '../helpers/missed-calls';

const t = suite<{ svc: MissedCallService; fake: FakeWhatsApp }>('missed calls (WhatsApp Cloud API)');
t.before(async (ctx) => {
  ctx.fake = await new FakeWhatsApp().start();
  ctx.svc = await startMissedCallService({
    WHATSAPP_ACCESS_TOKEN: ctx.fake.token,
    WHATSAPP_API_BASE_URL: ctx.fake.url,
    WHATSAPP_API_VERSION: ctx.fake.version,
    WHATSAPP_TIMEOUT_MS: '500',
    WHATSAPP_MAX_RETRIES: '1',
  });
});
t.after(async ({ svc, fake }) => {
  await svc.close();
  await fake.stop();
});

const get = (svc: MissedCallService, id: string) =>
  svc.api('GET', `/missed-calls/${id}`, { token: MC_TOKENS.demo });

t(
  'SENT: the template message reaches WhatsApp from the restaurant number, with its name, language and parameters',
  async ({ svc, fake }) => {
    const res = await report(svc, { caller_phone_number: '06 12 34 57 01' });
    assert.is(res.status, 201, res.text);
    assert.is(res.body.data.outcome, 'SENT');
    const [req] = fake.requests;
    assert.is(req?.problem, null);
    assert.is(req?.path, '/v21.0/106540352242922/messages');
    assert.is(req?.headers.authorization, `Bearer ${fake.token}`);
    assert.equal(req?.body.template, {
      name: 'missed_call_fr',
      language: { code: 'fr' },
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', parameter_name: 'guest_name', text: 'Madame, Monsieur' },
            { type: 'text', parameter_name: 'restaurant_name', text: 'Le Demo' },
            { type: 'text', parameter_name: 'booking_link', text: 'https://le-demo.example/book' },
          ],
        },
      ],
    });
    assert.is(req?.body.to, '+33612345701');
    assert.match(req?.body.biz_opaque_callback_data, new RegExp(`^${res.body.data.id}\\.1$`));
  },
);

t(
  '502 when WhatsApp rate-limits past the retries; the retry with the same external_call_id sends once',
  async ({ svc, fake }) => {
    const before = fake.accepted;
    fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.pairRateLimited);
    const body = { caller_phone_number: '0612345702', external_call_id: 'wa-502' };
    const failed = await report(svc, body);
    assert.is(failed.status, 502, failed.text);
    assert.is(failed.body.error.code, 'INTERNAL_ERROR');
    assert.match(failed.body.error.message, /Retry with the same external_call_id\.$/);
    assert.equal(
      {
        reason: failed.body.error.details.reason,
        code: failed.body.error.details.provider_code,
        retryable: failed.body.error.details.retryable,
      },
      { reason: 'PROVIDER_RATE_LIMITED', code: '131056', retryable: true },
    );
    const id = failed.body.error.details.missed_call_id;
    assert.is((await get(svc, id)).body.data.outcome, 'FAILED');
    assert.is(fake.accepted, before, 'nothing was sent');
    // The caller's cooldown did not start: nothing was sent.
    const retry = await report(svc, body);
    assert.is(retry.status, 201, retry.text);
    assert.equal([retry.body.data.id, retry.body.data.outcome], [id, 'SENT']);
    assert.is(fake.accepted, before + 1);
    // A third time: the first record, nothing more sent.
    const again = await report(svc, body);
    assert.equal([again.body.data.id, again.body.data.outcome], [id, 'SKIPPED_DUPLICATE']);
    assert.is(fake.accepted, before + 1);
    // The second attempt went out under its own reference.
    const refs = fake.requests
      .filter((r) => r.body?.biz_opaque_callback_data?.startsWith(id))
      .map((r) => r.body.biz_opaque_callback_data);
    assert.equal(refs, [`${id}.1`, `${id}.1`, `${id}.2`]);
  },
);

t(
  "a retry after the call's customer was erased sends nothing: SKIPPED_CUSTOMER_DELETED",
  async ({ svc, fake }) => {
    fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.pairRateLimited);
    const body = { caller_phone_number: '0612345703', external_call_id: 'wa-erased' };
    const failed = await report(svc, body);
    assert.is(failed.status, 502, failed.text);
    const id = failed.body.error.details.missed_call_id;
    const call = await get(svc, id);
    assert.is(call.body.data.outcome, 'FAILED');
    await runCli(svc, 'audit erase', { customer: call.body.data.customer_id });
    const before = fake.requests.length;
    const retry = await report(svc, body);
    assert.is(retry.status, 201, retry.text);
    assert.equal([retry.body.data.id, retry.body.data.outcome], [id, 'SKIPPED_CUSTOMER_DELETED']);
    assert.is(fake.requests.length, before, 'nothing asked of WhatsApp');
    const after = await get(svc, id);
    assert.equal(
      [after.body.data.outcome, after.body.data.caller_phone_number],
      ['SKIPPED_CUSTOMER_DELETED', null],
    );
  },
);

t(
  '502 PROVIDER_AUTH_FAILED on an expired token (190), PROVIDER_UNAVAILABLE on 5xx; without external_call_id a new report is a new call',
  async ({ svc, fake }) => {
    fake.script.push(GRAPH_ERRORS.authExpired);
    const auth = await report(svc, { caller_phone_number: '0612345703' });
    assert.is(auth.status, 502);
    assert.is(auth.body.error.details.reason, 'PROVIDER_AUTH_FAILED');
    // Nothing names this call: the answer does not tell the partner to retry with an id it never gave.
    assert.not.match(auth.body.error.message, /Retry with the same external_call_id/);
    assert.match(auth.body.error.message, /no external_call_id, so reporting it again records another call/);
    fake.script.push(GRAPH_ERRORS.serviceUnavailable, GRAPH_ERRORS.serviceUnavailable);
    const down = await report(svc, { caller_phone_number: '0612345703' });
    assert.is(down.status, 502);
    assert.is(down.body.error.details.reason, 'PROVIDER_UNAVAILABLE');
    assert.is.not(down.body.error.details.missed_call_id, auth.body.error.details.missed_call_id);
    const ok = await report(svc, { caller_phone_number: '0612345703' });
    assert.is(ok.body.data.outcome, 'SENT');
  },
);

t(
  'WhatsApp cannot deliver (131026): SKIPPED_INVALID_RECIPIENT; template paused (132015): SKIPPED_TEMPLATE_UNAVAILABLE; neither starts a cooldown',
  async ({ svc, fake }) => {
    fake.script.push(GRAPH_ERRORS.undeliverable);
    const r = await report(svc, { caller_phone_number: '0612345704', external_call_id: 'wa-undeliverable' });
    assert.is(r.status, 201);
    assert.is(r.body.data.outcome, 'SKIPPED_INVALID_RECIPIENT');
    // Final: the replay does not try again.
    const before = fake.requests.length;
    assert.is(
      (await report(svc, { caller_phone_number: '0612345704', external_call_id: 'wa-undeliverable' })).body
        .data.outcome,
      'SKIPPED_DUPLICATE',
    );
    assert.is(fake.requests.length, before);
    fake.script.push(GRAPH_ERRORS.templatePaused);
    const paused = await report(svc, { caller_phone_number: '0612345704' });
    assert.is(paused.body.data.outcome, 'SKIPPED_TEMPLATE_UNAVAILABLE');
    assert.is((await report(svc, { caller_phone_number: '0612345704' })).body.data.outcome, 'SENT');
  },
);

t(
  'no answer from WhatsApp (timeout): SEND_UNCONFIRMED, and a replay never sends it again',
  async ({ svc, fake }) => {
    fake.script.push({ kind: 'silence' });
    const body = { caller_phone_number: '0612345705', external_call_id: 'wa-silent' };
    const r = await report(svc, body);
    assert.is(r.status, 201, r.text);
    assert.is(r.body.data.outcome, 'SEND_UNCONFIRMED');
    const sent = fake.requests.length;
    const replay = await report(svc, body);
    assert.equal([replay.body.data.id, replay.body.data.outcome], [r.body.data.id, 'SKIPPED_DUPLICATE']);
    assert.is((await get(svc, r.body.data.id)).body.data.outcome, 'SEND_UNCONFIRMED');
    // It may have left: the caller is in cooldown.
    assert.is(
      (await report(svc, { caller_phone_number: '0612345705' })).body.data.outcome,
      'SKIPPED_COOLDOWN',
    );
    assert.is(fake.requests.length, sent);
  },
);

t(
  'a restaurant without a WhatsApp sending number: 502 PROVIDER_NOT_CONFIGURED, nothing asked of WhatsApp',
  async ({ svc, fake }) => {
    const before = fake.requests.length;
    const r = await report(svc, { caller_phone_number: '0612345706' }, MC_TOKENS.other);
    assert.is(r.status, 502);
    assert.is(r.body.error.details.reason, 'PROVIDER_NOT_CONFIGURED');
    assert.is(fake.requests.length, before);
  },
);

t(
  'a guest whose name has a new line, a tab or a run of spaces still gets the message: WhatsApp refuses such a parameter (#132018)',
  async ({ svc, fake }) => {
    const guest = await svc.api('POST', '/customers', {
      token: MC_TOKENS.demo,
      body: { name: 'Jean\n  Dupont\tfils      aîné', phone_number: '+33612345707' },
    });
    assert.is(guest.status, 201, guest.text);
    const r = await report(svc, { caller_phone_number: '06 12 34 57 07' });
    assert.is(r.status, 201, r.text);
    assert.equal([r.body.data.customer_id, r.body.data.outcome], [guest.body.data.id, 'SENT']);
    const sent = fake.requests.at(-1);
    assert.is(sent?.problem, null);
    assert.is(sent?.body.template.components[0].parameters[0].text, 'Jean Dupont fils aîné');
  },
);

t(
  "a retry after the call's customer was merged into one who opted out of WhatsApp (or is blacklisted) sends nothing",
  async ({ svc, fake }) => {
    const cases: {
      phone: string;
      id: string;
      cli: string;
      flags: Record<string, string>;
      outcome: string;
    }[] = [
      {
        phone: '0612345741',
        id: 'wa-merged-opted-out',
        cli: 'customers opt-out',
        flags: { channel: 'WHATSAPP' },
        outcome: 'SKIPPED_OPTED_OUT',
      },
      {
        phone: '0612345742',
        id: 'wa-merged-blacklisted',
        cli: 'customers blacklist',
        flags: {},
        outcome: 'SKIPPED_BLACKLISTED',
      },
    ];
    for (const c of cases) {
      fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.pairRateLimited);
      const body = { caller_phone_number: c.phone, external_call_id: c.id };
      const failed = await report(svc, body);
      assert.is(failed.status, 502, failed.text);
      const id = failed.body.error.details.missed_call_id;
      const from = (await get(svc, id)).body.data.customer_id;
      // The restaurant already knew the guest under another record: the call's customer is merged into it.
      const kept = await svc.api('POST', '/customers', {
        token: MC_TOKENS.demo,
        body: { name: `Guest ${c.id}`, email: `${c.id}@example.test` },
      });
      assert.ok(kept.status === 200 || kept.status === 201, kept.text);
      const into = kept.body.data.id;
      await runCli(svc, 'customers merge', { from, into });
      await runCli(svc, c.cli, { id: into, ...c.flags });
      const before = fake.requests.length;
      const retry = await report(svc, body);
      assert.is(retry.status, 201, retry.text);
      assert.equal([retry.body.data.id, retry.body.data.outcome], [id, c.outcome]);
      assert.is(fake.requests.length, before, 'nothing asked of WhatsApp');
    }
  },
);

t(
  "a retry after the call's customer was merged into a named guest greets them by the survivor's name",
  async ({ svc, fake }) => {
    fake.script.push(GRAPH_ERRORS.rateLimited, GRAPH_ERRORS.pairRateLimited);
    const body = { caller_phone_number: '0612345743', external_call_id: 'wa-merged-named' };
    const failed = await report(svc, body);
    assert.is(failed.status, 502, failed.text);
    const id = failed.body.error.details.missed_call_id;
    const from = (await get(svc, id)).body.data.customer_id;
    const kept = await svc.api('POST', '/customers', {
      token: MC_TOKENS.demo,
      body: { name: 'Camille Durand', email: 'camille.merged@example.test' },
    });
    assert.ok(kept.status === 200 || kept.status === 201, kept.text);
    await runCli(svc, 'customers merge', { from, into: kept.body.data.id });
    const before = fake.requests.length;
    const retry = await report(svc, body);
    assert.is(retry.status, 201, retry.text);
    assert.equal([retry.body.data.id, retry.body.data.outcome], [id, 'SENT']);
    const sent = fake.requests.slice(before).find((r) => r.problem === null);
    const params = sent?.body.template.components[0].parameters as { parameter_name: string; text: string }[];
    assert.is(params.find((p) => p.parameter_name === 'guest_name')?.text, 'Camille Durand');
  },
);

t(
  'a refusal whose text echoes the number and the message is stored without either (status and codes only)',
  async ({ svc, fake }) => {
    fake.script.push({
      kind: 'error',
      status: 400,
      code: 131026,
      message: '(#131026) Message undeliverable to +33612345706: "Madame, Monsieur" from Le Demo',
    });
    const r = await report(svc, { caller_phone_number: '0612345706' });
    assert.is(r.status, 201, r.text);
    assert.is(r.body.data.outcome, 'SKIPPED_INVALID_RECIPIENT');
    const stored = await storedEvents(svc.rt.events).readStream(missedCallStream(r.body.data.id));
    const failed = stored.find((e) => e.type === 'MessageFailed');
    assert.ok(failed, 'the refusal is recorded');
    assert.is(failed?.data.error, 'HTTP 400, WhatsApp error 131026, type OAuthException, fbtrace_id AbCdEf');
    assert.not.match(JSON.stringify(failed?.data), /612345706|Madame|Monsieur|Demo|undeliverable/);
  },
);

t.run();
