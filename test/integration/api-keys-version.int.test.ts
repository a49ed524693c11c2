// api_keys version 2 on keeps each key's grant (`granted_scopes`: the scopes an OAuth token's consent gave),
// so `keys list` marks a token widened beyond its grant from the read model alone; version 1 made it
// fold every OAuth token's stream. A store built before (MongoDB keeps its read models across restarts)
// keeps serving version 1 while the served version (2 on) is rebuilt beside it: `keys list` says the same then (the
// streams folded for version 1's documents only), and after the switch reads no key's stream.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyStream } from '../../commands/credentials/events';
import { API_KEYS, type ApiKeyDoc, apiKeysProjection, apiKeysProjectionV1 } from '../../projections/api-keys';
import { allProjections, allProjectionVersions } from '../../projections/index';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { compareReadModels, replayInto } from '../../src/audit/replay';
import { ANY, NO_STREAM, type ReadStreamOptions, type RecordedEvent } from '../../src/ports/event-store';
import type { Projection } from '../../src/projection/projection';
import { ProjectionRunner } from '../../src/projection/runner';
import { AliasedDocumentStore, ProjectionVersions } from '../../src/projection/versions';
import type { Runtime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';
import { captureLog } from '../helpers/log-sink';

const t = suite('api_keys version 2: the grant in the read model');
const NAME = 'api_keys';
const AT = '2026-06-02T10:00:00.000Z';

const apiKeys = (list: Projection[]) => list.filter((p) => p.name === NAME);
/** The collection the newest version writes (version 3 also marks tokens cut off: oauth-cut-off-*). */
const NEWEST = `${API_KEYS}_v${apiKeysProjection.version}`;

/** The log, counting the reads of API keys' streams (what keys list folded per OAuth token). */
class CountingEvents extends MemoryEventStore {
  keyStreamReads = 0;
  override readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    if (stream.startsWith('apikey-')) this.keyStreamReads++;
    return super.readStream(stream, options);
  }
}

const created = (key: string, type: 'API_KEY' | 'OAUTH', scopes: string[]) => ({
  type: 'ApiKeyCreated',
  data: {
    key_id: key,
    restaurant_id: 'rest_a',
    name: key,
    token_hash: `hash_${key}`,
    token_hint: key.slice(-4),
    scopes,
    type,
    application: type === 'OAUTH' ? { id: 'app_till', name: 'Till' } : null,
    at: AT,
  },
});

async function history(events: MemoryEventStore): Promise<void> {
  await events.append(apiKeyStream('key_pos'), [created('key_pos', 'API_KEY', ['CATALOG_READ'])], NO_STREAM);
  // An OAuth token consented for two scopes, then widened by the keys update of before the rule.
  await events.append(
    apiKeyStream('key_wide'),
    [
      created('key_wide', 'OAUTH', ['CATALOG_READ', 'RESERVATIONS_READ']),
      {
        type: 'ApiKeyUpdated',
        data: {
          key_id: 'key_wide',
          restaurant_id: 'rest_a',
          at: AT,
          scopes: ['CATALOG_READ', 'RESERVATIONS_READ', 'CUSTOMERS_READ'],
        },
      },
    ],
    NO_STREAM,
  );
  // One narrowed within its grant: nothing beyond it.
  await events.append(
    apiKeyStream('key_narrow'),
    [
      created('key_narrow', 'OAUTH', ['CATALOG_READ', 'RESERVATIONS_READ']),
      {
        type: 'ApiKeyUpdated',
        data: { key_id: 'key_narrow', restaurant_id: 'rest_a', at: AT, scopes: ['CATALOG_READ'] },
      },
    ],
    ANY,
  );
}

/** `keys list --json` against these stores: each key's scopes beyond its grant. */
async function beyondGrant(docs: AliasedDocumentStore, events: CountingEvents) {
  const rt = { docs, events } as unknown as Runtime;
  const lines = await runCli(rt, 'keys list', { json: true });
  return Object.fromEntries(
    lines
      .map((l) => JSON.parse(l) as { id: string; scopes_beyond_grant: string[] })
      .map((k) => [k.id, k.scopes_beyond_grant]),
  );
}

const EXPECTED = { key_pos: [], key_wide: ['CUSTOMERS_READ'], key_narrow: [] };

t(
  'a store built by version 1 is listed the same before and after the switch to the newest version, which equals a replay',
  async () => {
    const events = new CountingEvents();
    const docs = new EmbeddedDocumentStore();
    await history(events);

    // The store as the service left it before the upgrade: version 1, as it ran then (not versioned).
    const { collections: _unversioned, ...asBefore } = apiKeysProjectionV1;
    const before = new ProjectionRunner(events, docs, [asBefore]);
    await before.start();
    await before.catchUp();
    await before.stop();
    assert.is(
      (await docs.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: 'key_wide' }))?.granted_scopes,
      undefined,
    );

    // The upgraded service on that store: version 1 serves until the newest is built.
    const { logger } = captureLog();
    const aliased = new AliasedDocumentStore(docs);
    const versions = new ProjectionVersions(events, docs, aliased, { logger, graceMs: 10, batchSize: 100 });
    const runner = new ProjectionRunner(
      events,
      docs,
      await versions.prepare(apiKeys(allProjectionVersions())),
    );
    await runner.start();
    await runner.catchUp();
    assert.is(aliased.resolve(API_KEYS), API_KEYS, 'version 1 serves meanwhile');
    events.keyStreamReads = 0;
    assert.equal(await beyondGrant(aliased, events), EXPECTED, 'version 1 documents: the streams are folded');
    assert.is(events.keyStreamReads, 2, "each OAuth token's stream, for version 1's documents");

    versions.startPendingBuilds();
    await versions.whenBuilt(NAME);
    await runner.catchUp();
    assert.is(aliased.resolve(API_KEYS), NEWEST);
    const served = aliased.collection<ApiKeyDoc>(API_KEYS);
    assert.equal((await served.findOne({ _id: 'key_wide' }))?.granted_scopes, [
      'CATALOG_READ',
      'RESERVATIONS_READ',
    ]);
    assert.equal((await served.findOne({ _id: 'key_narrow' }))?.scopes, ['CATALOG_READ']);
    events.keyStreamReads = 0;
    assert.equal(await beyondGrant(aliased, events), EXPECTED, 'the newest version says the same');
    assert.is(events.keyStreamReads, 0, 'and reads no key stream');

    // What `audit verify` compares: the served read model equals a replay of the log.
    const scratch = new EmbeddedDocumentStore();
    await replayInto(events, scratch, apiKeys(allProjections()), null);
    const compared = await compareReadModels(scratch, aliased, [API_KEYS]);
    assert.equal(compared.differences, []);
    assert.is(compared.documents, 3);
    await versions.stop();
    await runner.stop();
  },
);

t('a fresh store is built at the newest version at once', async () => {
  const events = new CountingEvents();
  await history(events);
  const docs = new EmbeddedDocumentStore();
  const { logger } = captureLog();
  const aliased = new AliasedDocumentStore(docs);
  const versions = new ProjectionVersions(events, docs, aliased, { logger });
  const runner = new ProjectionRunner(events, docs, await versions.prepare(apiKeys(allProjectionVersions())));
  await runner.start();
  await runner.catchUp();
  assert.is(aliased.resolve(API_KEYS), NEWEST);
  events.keyStreamReads = 0;
  assert.equal(await beyondGrant(aliased, events), EXPECTED);
  assert.is(events.keyStreamReads, 0);
  await versions.stop();
  await runner.stop();
});

t.run();
