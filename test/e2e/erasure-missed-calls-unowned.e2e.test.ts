// Right to erasure for a missed call whose number no customer had: a call to a restaurant without the
// missed-call feature matches and creates nobody, so no customer's key could seal its number. It is
// sealed with a key of its own, linked in the key store to a keyed hash of the number
// (src/privacy/number-keys.ts). A customer created later with that number and then erased takes those
// calls with them: their keys are destroyed, the links deleted, `MissedCallCallerErased` appended. Then
// the number is readable nowhere (every file of the data directory, the read models, the API, the log
// lines, `audit history`), before and after a restart, while another caller's call stays readable.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { numberHash, numberIndexSubject, numberLabel } from '../../src/privacy/number-keys';
import { runCli as cli, rawDataFiles as rawFiles } from '../helpers/cli-in-process';
import { captureLog } from '../helpers/log-sink';
import { MC_TOKENS, readModelsText as readModels, startMissedCallServiceIn } from '../helpers/missed-calls';
import type { TestService } from '../helpers/service';

const t = suite('erasure: a missed call whose number no customer had');

/** The caller's number in every spelling the data could hold, and the later customer's name. */
const PERSONAL = /644332211|44 33 22 11|Ada Unowned/;
/** Another caller nobody knew, never erased: stays readable. */
const OTHER = '+33633221100';

const start = (dataDir: string, logger = captureLog()) => startMissedCallServiceIn(dataDir, logger.logger);

t('the number of a call to a restaurant without the feature is erased with a later customer', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-unowned-'));
  try {
    await erasedByNumber(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

t('a number a customer was given by an update, not at creation, is erased with them too', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'couvert-erasure-unowned-update-'));
  const svc = await start(dataDir);
  try {
    const call = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.off,
      body: { caller_phone_number: '06 55 44 33 22' },
    });
    assert.is(call.status, 201, call.text);
    const bo = await svc.api('POST', '/customers', {
      token: MC_TOKENS.off,
      body: { name: 'Bo Later', on_match: 'create_new' },
    });
    assert.is(bo.status, 201, bo.text);
    // The number comes with a PATCH (CustomerUpdated's changes), then gives way to another one.
    for (const phone_number of ['+33655443322', '+33699887766']) {
      const patched = await svc.api('PATCH', `/customers/${bo.body.data.id}`, {
        token: MC_TOKENS.off,
        body: { phone_number },
      });
      assert.is(patched.status, 200, patched.text);
    }
    await cli(svc, 'audit erase', { customer: bo.body.data.id });
    const one = await svc.api('GET', `/missed-calls/${call.body.data.id}`, { token: MC_TOKENS.off });
    assert.is(one.body.data.caller_phone_number, null, 'the call of a number the customer once had');
    assert.not.match(rawFiles(dataDir), /655443322|55 44 33 22|Bo Later/, 'in no file of the data directory');
  } finally {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

async function erasedByNumber(dataDir: string) {
  const log = captureLog();
  let svc = await start(dataDir, log);
  const calls: string[] = [];
  let otherCall = '';
  try {
    // Two calls from a number nobody has, one with an external id; a call from another stranger.
    for (const body of [
      { caller_phone_number: '06 44 33 22 11', external_call_id: 'unowned-1' },
      { caller_phone_number: '+33 6 44 33 22 11' },
    ]) {
      const r = await svc.api('POST', '/missed-calls', { token: MC_TOKENS.off, body });
      assert.is(r.status, 201, r.text);
      assert.equal(
        [r.body.data.outcome, r.body.data.customer_id, r.body.data.caller_phone_number],
        ['SKIPPED_FEATURE_DISABLED', null, '+33644332211'],
        'the call reads as before while nobody is erased',
      );
      calls.push(r.body.data.id);
    }
    const other = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.off,
      body: { caller_phone_number: OTHER },
    });
    otherCall = other.body.data.id;
    assert.not.match(rawFiles(dataDir), PERSONAL, 'the number is sealed from the start, in no file in clear');
    // The key store holds the link under a keyed hash of the number, never the number.
    const indexKey = await svc.rt.keys.obtain(numberIndexSubject('rest_off'));
    const label = numberLabel('rest_off', numberHash(indexKey, '+33644332211'));
    assert.is((await svc.rt.keys.linked(label)).length, 2, 'one key per call, both linked to the number');

    // Later, a customer of that restaurant with that number, then their erasure.
    const ada = await svc.api('POST', '/customers', {
      token: MC_TOKENS.off,
      body: { name: 'Ada Unowned', phone_number: '+33644332211', on_match: 'create_new' },
    });
    assert.is(ada.status, 201, ada.text);
    await cli(svc, 'audit erase', { customer: ada.body.data.id });
    assert.equal(await svc.rt.keys.linked(label), [], 'the links are gone with the keys');

    await checkErased(svc, calls, otherCall, 'live');
    for (const id of calls) {
      const history = (await cli(svc, 'audit history', { json: true }, [id])).map(
        (l) => JSON.parse(l) as { type: string; changes: { field: string; to: unknown }[] },
      );
      assert.not.match(JSON.stringify(history), PERSONAL, 'audit history shows the number erased');
      assert.ok(
        // The report, not the external call id's claim listed before it.
        history
          .find((e) => e.type === 'MissedCallReported')
          ?.changes.some((c) => c.field === 'erased' && c.to === true),
        'the report reads erased',
      );
      assert.is(history.at(-1)?.type, 'MissedCallCallerErased', 'the history says when and why');
    }
    const verified = await cli(svc, 'audit verify', { 'no-progress': true });
    assert.match(verified[0] as string, /0 problem\(s\)/, 'the log is intact: erasure rewrote nothing');
    assert.not.match(rawFiles(dataDir), PERSONAL, 'in no file of the data directory');
    const lines = log.lines.join('');
    assert.ok(lines.length > 0);
    assert.not.match(lines, PERSONAL, 'no log line holds the number');
  } finally {
    await svc.close({ keepData: true });
  }
  svc = await start(dataDir);
  try {
    await checkErased(svc, calls, otherCall, 'after a replay');
    // A new call from the number after the erasure is sealed again (a new person may have it).
    const again = await svc.api('POST', '/missed-calls', {
      token: MC_TOKENS.off,
      body: { caller_phone_number: '06 44 33 22 11' },
    });
    assert.is(again.body.data.caller_phone_number, '+33644332211');
  } finally {
    await svc.close({ keepData: true });
  }
  assert.not.match(rawFiles(dataDir), PERSONAL, 'the new call is sealed too');
}

async function checkErased(svc: TestService, calls: string[], otherCall: string, when: string) {
  for (const id of calls) {
    const one = await svc.api('GET', `/missed-calls/${id}`, { token: MC_TOKENS.off });
    assert.is(one.status, 200, one.text);
    assert.equal(
      [one.body.data.caller_phone_number, one.body.data.outcome],
      [null, 'SKIPPED_FEATURE_DISABLED'],
      `GET /missed-calls/{id} shows the caller erased (${when})`,
    );
  }
  const kept = await svc.api('GET', `/missed-calls/${otherCall}`, { token: MC_TOKENS.off });
  assert.is(kept.body.data.caller_phone_number, OTHER, `another caller's call is untouched (${when})`);
  const list = (await cli(svc, 'missed-calls list', { restaurant: 'rest_off' })).join('\n');
  assert.match(list, /\[erased\]/);
  assert.not.match(list, PERSONAL, `missed-calls list (${when})`);
  assert.not.match(await readModels(svc), PERSONAL, `no read model holds it (${when})`);
  const all = JSON.stringify((await svc.api('GET', '/missed-calls', { token: MC_TOKENS.off })).body.data);
  assert.not.match(all, PERSONAL, `GET /missed-calls (${when})`);
}

t.run();
