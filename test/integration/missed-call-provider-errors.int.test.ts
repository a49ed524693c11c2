// A refusal recorded before the WhatsApp adapter kept only a summary of WhatsApp's answer held
// Graph's own text in clear (`MessageFailed.error`: it may echo the number or the message). Every
// reader through the sealing layer reads it as the adapter now writes it
// (commands/missed-calls/legacy-provider-errors.ts); the stored row stays as it was.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { summarisedProviderError } from '../../commands/missed-calls/legacy-provider-errors';
import { allProjectionVersions } from '../../projections/index';
import { MESSAGES, type MessageDoc } from '../../projections/missed-calls';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { NO_STREAM } from '../../src/ports/event-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { ProjectionRunner } from '../../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../../src/projection/versions';
import { captureLog } from '../helpers/log-sink';

const t = suite('missed calls: old refusals holding WhatsApp’s text');

const OLD = 'HTTP 400: (#131026) Message undeliverable to +33612345678 (Bonjour Ada, rappelez Le Demo)';

t('an old refusal reads as its status and code, on every read path; a current one as stored', async () => {
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, new MemoryKeyStore());
  const base = { missed_call_id: 'mc_1', restaurant_id: 'r', at: '2026-06-02T10:00:00Z', attempt: 1 };
  await inner.append(
    'missed-call-mc_1',
    [
      {
        type: 'MessageFailed',
        data: {
          ...base,
          message_id: 'm1',
          kind: 'invalid_recipient',
          code: '131026',
          error: OLD,
          retryable: false,
          outcome: 'SKIPPED_INVALID_RECIPIENT',
        },
      },
      {
        type: 'MessageFailed',
        data: {
          ...base,
          message_id: 'm2',
          kind: 'unavailable',
          code: null,
          error: 'HTTP 503 (Service down for +33612345678)',
          retryable: true,
          outcome: null,
        },
      },
      {
        type: 'MessageFailed',
        data: {
          ...base,
          message_id: 'm3',
          kind: 'unavailable',
          code: '131016',
          error: 'HTTP 503, WhatsApp error 131016',
          retryable: true,
          outcome: null,
        },
      },
      {
        type: 'MessageFailed',
        data: {
          ...base,
          message_id: 'm4',
          kind: 'not_configured',
          code: null,
          error: 'the restaurant has no WhatsApp number',
          retryable: false,
          outcome: null,
        },
      },
    ],
    NO_STREAM,
  );
  const expected = [
    'HTTP 400, WhatsApp error 131026',
    'HTTP 503',
    'HTTP 503, WhatsApp error 131016',
    'the restaurant has no WhatsApp number',
  ];
  assert.equal(
    (await store.readStream('missed-call-mc_1')).map((e) => e.data.error),
    expected,
  );
  const all: unknown[] = [];
  for await (const e of store.readAll()) if (e.type === 'MessageFailed') all.push(e.data.error);
  assert.equal(all, expected);
  // The other fields are kept; the row as stored is unchanged (an export shows it).
  const [first] = await store.readStream('missed-call-mc_1');
  assert.is(first?.data.kind, 'invalid_recipient');
  assert.is((await inner.readStream('missed-call-mc_1'))[0]?.data.error, OLD);
});

t('the rule reads only the old adapter’s "HTTP nnn:" or "HTTP nnn (" texts', () => {
  assert.is(summarisedProviderError('HTTP 401', '190'), 'HTTP 401');
  assert.is(
    summarisedProviderError('HTTP 401: Invalid OAuth access token', '190'),
    'HTTP 401, WhatsApp error 190',
  );
  assert.is(summarisedProviderError('HTTP 400: x', '13 1'), 'HTTP 400');
  assert.is(
    summarisedProviderError('could not connect: ECONNREFUSED', null),
    'could not connect: ECONNREFUSED',
  );
});

t(
  'a read model built before (MongoDB keeps it) is rebuilt as version 2, which holds only the summary',
  async () => {
    const inner = new MemoryEventStore();
    const store = new SealingEventStore(inner, new MemoryKeyStore());
    const base = { missed_call_id: 'mc_1', restaurant_id: 'r', at: '2026-06-02T10:00:00.000Z' };
    await inner.append(
      'missed-call-mc_1',
      [
        {
          type: 'MessageRequested',
          data: {
            ...base,
            message_id: 'm1',
            attempt: 1,
            idempotency_key: 'mc_1.1',
            to: '+33612345678',
            template_id: 'tpl_1',
            template_name: 'missed_call_fr',
            template_type: 'MISSED_CALL',
            language: 'fr',
            form: 'named',
            parameters: [],
            text: 'Bonjour',
            sender: 'whatsapp-cloud',
          },
        },
        {
          type: 'MessageFailed',
          data: {
            ...base,
            message_id: 'm1',
            attempt: 1,
            kind: 'invalid_recipient',
            code: '131026',
            error: OLD,
            retryable: false,
            outcome: 'SKIPPED_INVALID_RECIPIENT',
          },
        },
      ],
      NO_STREAM,
    );
    const versions = () => allProjectionVersions().filter((p) => p.name === 'missed-calls');
    // The store as an older service left it: version 1, built from the log without the read rule.
    const docs = new EmbeddedDocumentStore();
    const v1 = versions().find((p) => (p.version ?? 1) === 1);
    assert.ok(v1, 'version 1 is still listed for stores built with it');
    const before = new ProjectionRunner(inner, docs, [v1]);
    await before.start();
    await before.catchUp();
    await before.stop();
    assert.match(
      String((await docs.collection<MessageDoc>(MESSAGES).findOne({ _id: 'm1' }))?.error),
      /Bonjour/,
    );
    // The upgraded service on that store (reading through the sealing layer).
    const { logger } = captureLog();
    const aliased = new AliasedDocumentStore(docs);
    const upgraded = new ProjectionVersions(store, docs, aliased, { logger, graceMs: 10, batchSize: 100 });
    const runner = new ProjectionRunner(store, docs, await upgraded.prepare(versions()));
    await runner.start();
    upgraded.startPendingBuilds();
    await upgraded.whenBuilt('missed-calls');
    await runner.catchUp();
    const served = await aliased.collection<MessageDoc>(MESSAGES).findOne({ _id: 'm1' });
    assert.is(served?.error, 'invalid_recipient 131026: HTTP 400, WhatsApp error 131026');
    await upgraded.stop();
    await runner.stop();
  },
);

t.run();
