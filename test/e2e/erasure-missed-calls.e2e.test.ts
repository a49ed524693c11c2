// Right to erasure for missed calls and the messages sent about them: the caller's number, the message's
// number, text and parameters, and the outbox's copy are sealed with the customer's key; the caller's
// cooldown stream is named by a keyed hash of the number. After `audit erase`, the customer's number and
// name are readable nowhere: not in any file of the data directory, not in any read model, not in the
// log lines, not in GET /missed-calls (one or the list), the CLI, `audit history`/`as-of`/`export`, nor
// after a restart's replay; the missed-call analytics keep their counts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ANALYTICS_MISSED_CALL_DAYS } from '../../projections/analytics/missed-call-projection';
import type { FixedClock } from '../../src/core/clock';
import { sweepCallerKeys } from '../../src/missed-calls-module';
import { CALLER_PERIOD_MS, callerKeySubject, callerPeriod } from '../../src/privacy/caller-ids';
import { customerSubject } from '../../src/privacy/seal';
import { runCli as cli, rawDataFiles as rawFiles } from '../helpers/cli-in-process';
import { captureLog } from '../helpers/log-sink';
import {
  MC_NOW,
  MC_TOKENS,
  readModelsText as readModels,
  startMissedCallServiceIn,
} from '../helpers/missed-calls';
import type { TestService } from '../helpers/service';

const t = suite('erasure: missed calls and messages');

/** Grace's number in every spelling the log could hold, her name, and what the message said. */
const PERSONAL = /699887766|99 88 77 66|Hopper/;
/** The other restaurant's customer, whose number reached a restaurant without the feature. */
const OFF_PERSONAL = /655443322|Lin Wei/;
/** A caller nobody knew: the call creates a customer named after the number ("+33 6 11 00 22 33"). */
const NEW_PERSONAL = /611002233|11 00 22 33/;

async function analyticsCounts(svc: TestService) {
  await svc.rt.projections.catchUp();
  const days = await svc.rt.docs.collection(ANALYTICS_MISSED_CALL_DAYS).find({});
  return days
    .map(({ _pos, _applied, ...d }) => JSON.stringify(d))
    .sort()
    .join('\n');
}

const start = (dataDir: string, logger = captureLog()) => startMissedCallServiceIn(dataDir, logger.logger);

t('a missed call and its message are sealed, then erased everywhere with the customer', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-mc-'));
  try {
    await erasedEverywhere(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function erasedEverywhere(dataDir: string) {
  const log = captureLog();
  let svc = await start(dataDir, log);
  let callId = '';
  let offCallId = '';
  let graceId = '';
  let linId = '';
  let analyticsBefore = '';
  try {
    const grace = await svc.api('POST', '/customers', {
      token: MC_TOKENS.demo,
      body: { name: 'Grace Hopper', phone_number: '+33699887766', on_match: 'create_new' },
    });
    assert.is(grace.status, 201, grace.text);
    graceId = grace.body.data.id;
    const call = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '06 99 88 77 66', external_call_id: 'call-erase-1' },
    });
    assert.is(call.status, 201, call.text);
    assert.equal(
      [call.body.data.outcome, call.body.data.caller_phone_number, call.body.data.customer_id],
      ['SENT', '+33699887766', graceId],
      'a non-erased caller reads as before',
    );
    callId = call.body.data.id;
    // The log seals the number; a replay is still told from another call reusing the id.
    const replayed = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '+33 6 99 88 77 66', external_call_id: 'call-erase-1' },
    });
    assert.is(replayed.body.data?.outcome, 'SKIPPED_DUPLICATE', replayed.text);
    const reused = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '06 99 88 77 67', external_call_id: 'call-erase-1' },
    });
    assert.equal(
      [reused.status, reused.body.error?.details?.fields],
      [409, ['caller_phone_number']],
      reused.text,
    );
    // The cooldown works on the hashed caller stream.
    const again = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '+33 6 99 88 77 66' },
    });
    assert.is(again.body.data.outcome, 'SKIPPED_COOLDOWN', again.text);
    // A restaurant without the feature: nobody is matched, but its customer with that number owns it.
    const lin = await svc.api('POST', '/customers', {
      token: MC_TOKENS.off,
      body: { name: 'Lin Wei', phone_number: '+33655443322', on_match: 'create_new' },
    });
    assert.is(lin.status, 201, lin.text);
    linId = lin.body.data.id;
    const off = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.off,
      body: { caller_phone_number: '06 55 44 33 22' },
    });
    assert.equal([off.body.data.outcome, off.body.data.customer_id], ['SKIPPED_FEATURE_DISABLED', null]);
    offCallId = off.body.data.id;
    const stranger = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '06 11 00 22 33' },
    });
    assert.equal(
      [stranger.body.data.outcome, stranger.body.data.caller_phone_number],
      ['SENT', '+33611002233'],
    );
    const strangerId = stranger.body.data.customer_id as string;
    assert.ok(strangerId && strangerId !== graceId, 'a customer was created from the number');

    const messages = (await cli(svc, 'messages list', { restaurant: 'rest_demo' })).join('\n');
    assert.match(messages, /Grace Hopper/, 'the message greets her by name while she exists');
    assert.match(messages, /\+33699887766/);
    let streams = '';
    for await (const e of svc.rt.events.readAll()) streams += `${e.stream}\n`;
    assert.match(streams, /missed-call-caller-rest_demo-/);
    assert.not.match(streams, /699887766|655443322/, 'no stream id holds a number');
    assert.not.match(rawFiles(dataDir), PERSONAL, 'nothing personal in clear in any file, even before');
    assert.not.match(rawFiles(dataDir), OFF_PERSONAL);
    assert.not.match(rawFiles(dataDir), NEW_PERSONAL);
    analyticsBefore = await analyticsCounts(svc);
    assert.ok(analyticsBefore.length > 0);

    await cli(svc, 'audit erase', { customer: graceId });
    await cli(svc, 'audit erase', { customer: linId });
    await cli(svc, 'audit erase', { customer: strangerId });
    assert.is((await svc.rt.keys.find(customerSubject(graceId))).state, 'destroyed');

    await checkErased(svc, callId, offCallId, 'live');
    // Erased, the call holds no number to compare (nor any hash of it): a replay of its id answers
    // its record, whatever number it gives.
    const afterErasure = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.demo,
      body: { caller_phone_number: '06 99 88 77 67', external_call_id: 'call-erase-1' },
    });
    assert.equal(
      [afterErasure.status, afterErasure.body.data?.outcome],
      [201, 'SKIPPED_DUPLICATE'],
      afterErasure.text,
    );
    assert.is(await analyticsCounts(svc), analyticsBefore, 'the analytics keep their counts');
    const history = (await cli(svc, 'audit history', { json: true }, [callId])).map((l) => JSON.parse(l));
    assert.ok(history.length >= 3);
    assert.not.match(JSON.stringify(history), PERSONAL, 'audit history shows the caller erased');
    assert.ok(
      // The report, not the external call id's claim listed before it.
      history
        .find((e: { type: string }) => e.type === 'MissedCallReported')
        .changes.some((c: { field: string; to: unknown }) => c.field === 'erased' && c.to === true),
      'the history says so',
    );
    const asOf = (
      await cli(svc, 'audit as-of', { at: String(await svc.rt.events.headPosition()) }, [callId])
    ).join('\n');
    assert.ok(asOf.length > 0);
    assert.not.match(asOf, PERSONAL);
    const out = join(dataDir, 'export.ndjson');
    await cli(svc, 'audit export', { restaurant: 'rest_demo', out, 'no-progress': true });
    const exported = readFileSync(out, 'utf8');
    rmSync(out);
    assert.match(exported, /MessageRequested/);
    assert.not.match(exported, PERSONAL, 'an export holds them sealed');
    const verified = await cli(svc, 'audit verify', { 'no-progress': true });
    assert.match(verified[0] as string, /0 problem\(s\)/, 'the log is intact: erasure rewrote nothing');
    assert.not.match(rawFiles(dataDir), PERSONAL);
    assert.not.match(rawFiles(dataDir), OFF_PERSONAL);
    assert.not.match(rawFiles(dataDir), NEW_PERSONAL);
    const lines = log.lines.join('');
    assert.ok(lines.length > 0);
    assert.not.match(lines, PERSONAL, 'no log line holds the number or the name');
    assert.not.match(lines, OFF_PERSONAL);
    assert.not.match(lines, NEW_PERSONAL);

    // The caller ids the calls left in stream names: their key lives while a cooldown may read it,
    // and the scheduler's sweep destroys it two periods on. Then no number can be tested against them.
    const callPeriod = callerPeriod(new Date(MC_NOW));
    const callerKey = () => svc.rt.keys.find(callerKeySubject('rest_demo', callPeriod));
    assert.is((await callerKey()).state, 'active');
    assert.is(await sweepCallerKeys(svc.rt), null, 'nothing to destroy yet');
    (svc.rt.clock as FixedClock).advance((2 * CALLER_PERIOD_MS) / 1000);
    assert.match((await sweepCallerKeys(svc.rt)) ?? '', /destroyed 1 caller key/);
    assert.is((await callerKey()).state, 'destroyed');
  } finally {
    await svc.close({ keepData: true });
  }
  // A restart replays the log into every read model: the same.
  svc = await start(dataDir);
  try {
    await checkErased(svc, callId, offCallId, 'after a replay');
    assert.is(await analyticsCounts(svc), analyticsBefore, 'the analytics replay to the same counts');
  } finally {
    await svc.close({ keepData: true });
  }
}

async function checkErased(svc: TestService, callId: string, offCallId: string, when: string) {
  const one = await svc.api('GET', `/missed-calls/${callId}`, { token: MC_TOKENS.demo });
  assert.is(one.status, 200, one.text);
  assert.equal(
    [one.body.data.caller_phone_number, one.body.data.outcome, one.body.data.template_type],
    [null, 'SENT', 'MISSED_CALL'],
    `GET /missed-calls/{id} shows the caller erased (${when})`,
  );
  const list = await svc.api('GET', '/missed-calls', { token: MC_TOKENS.demo });
  assert.is(list.status, 200);
  assert.equal(
    list.body.data.map((c: { caller_phone_number: string | null }) => c.caller_phone_number),
    [null, null, null],
    `the list too (${when})`,
  );
  const off = await svc.api('GET', `/missed-calls/${offCallId}`, { token: MC_TOKENS.off });
  assert.is(off.body.data.caller_phone_number, null, `the feature-off call too (${when})`);
  const calls = (await cli(svc, 'missed-calls list', { restaurant: 'rest_demo' })).join('\n');
  assert.match(calls, /\[erased\]/);
  assert.not.match(calls, PERSONAL);
  const messages = (await cli(svc, 'messages list', { restaurant: 'rest_demo' })).join('\n');
  assert.match(messages, /to \[erased\]/);
  assert.not.match(messages, PERSONAL, `messages list (${when})`);
  const models = await readModels(svc);
  assert.not.match(models, PERSONAL, `no read model holds them (${when})`);
  assert.not.match(models, OFF_PERSONAL, `no read model holds them (${when})`);
  assert.not.match(models, NEW_PERSONAL, `no read model holds them (${when})`);
  const all = JSON.stringify(
    (await svc.api('GET', '/missed-calls', { token: MC_TOKENS.demo })).body.data.concat(
      (await svc.api('GET', '/customers', { token: MC_TOKENS.demo })).body.data,
    ),
  );
  assert.not.match(all, PERSONAL);
  assert.not.match(all, NEW_PERSONAL, `GET /customers no longer lists them (${when})`);
}

t.run();
