// A graceful stop while POST /missed-calls waits for WhatsApp's answer. The send used to wait out its
// timeout (WHATSAPP_TIMEOUT_MS, up to 15 s) past the drain's grace: the request was cut without an answer
// and the call's MessageUnconfirmed appended to a closed store (lost; the call read PENDING). Now a send
// still waiting a moment after the stop began is cut (rt.stopping): the call is recorded SEND_UNCONFIRMED
// (it may have left: never sent again, docs/MISSED-CALLS.md) and the request answered before the stores close.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { FakeWhatsApp } from '../helpers/fake-whatsapp';
import { MC_NOW, MC_TOKENS, missedCallBootstrap, report } from '../helpers/missed-calls';
import { orClose, REQUEST_HANG_MS, startTestService, type TestService } from '../helpers/service';

const start = (dataDir: string, fake: FakeWhatsApp) =>
  startTestService({
    bootstrap: missedCallBootstrap(),
    dataDir,
    clock: new FixedClock(MC_NOW),
    env: {
      WHATSAPP_ACCESS_TOKEN: fake.token,
      WHATSAPP_API_BASE_URL: fake.url,
      WHATSAPP_API_VERSION: fake.version,
      // Far longer than the stop's drain: only the stop can end this send.
      WHATSAPP_TIMEOUT_MS: '15000',
      WHATSAPP_MAX_RETRIES: '1',
    },
  });

test('a stop during a send that WhatsApp never answers records SEND_UNCONFIRMED and answers the request; it is never sent again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-missed-calls-stop-'));
  const fake = await new FakeWhatsApp().start();
  let svc: TestService | null = await orClose(start(dir, fake), () => fake.stop());
  try {
    fake.script.push({ kind: 'silence' });
    const body = { caller_phone_number: '0612345790', external_call_id: 'stop-1' };
    const reporting = report(svc, body);
    // Hang bound only: the request reaches the provider, which holds it.
    for (const until = Date.now() + REQUEST_HANG_MS; fake.requests.length < 1; ) {
      if (Date.now() > until) throw new Error('the send never reached the provider');
      await new Promise((r) => setTimeout(r, 10));
    }
    const stopped = svc.stop();
    const answer = await reporting;
    await stopped;
    svc = null;
    assert.is(answer.status, 201, answer.text);
    assert.is(answer.body.data.outcome, 'SEND_UNCONFIRMED');
    const id = answer.body.data.id;

    // The outcome was recorded before the stores closed; the same report sends nothing again.
    svc = await start(dir, fake);
    const read = await svc.api('GET', `/missed-calls/${id}`, { token: MC_TOKENS.demo });
    assert.is(read.body.data.outcome, 'SEND_UNCONFIRMED');
    const again = await report(svc, body);
    assert.equal([again.body.data.id, again.body.data.outcome], [id, 'SKIPPED_DUPLICATE']);
    assert.is(fake.requests.length, 1, 'the message was asked of WhatsApp once');
  } finally {
    await svc?.stop();
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
