// api_keys version 3 marks the OAuth tokens an application's cut-off (`applications disable
// --disconnect`) bars, which authentication and the webhook publisher then refuse (`keyWithdrawn`). A
// store built before (MongoDB keeps its read models across restarts) serves version 2 while version 3
// is rebuilt from the whole log beside it: a cut-off recorded before the upgrade, whose sweep missed a
// token, bars that token once the switch is made, and the served read model equals a replay.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyStream } from '../../commands/credentials/events';
import { applicationStream } from '../../commands/oauth/events';
import {
  API_KEYS,
  type ApiKeyDoc,
  apiKeysProjection,
  apiKeysProjectionV1,
  apiKeysProjectionV2,
} from '../../projections/api-keys';
import { keyWithdrawn } from '../../queries/api-keys';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import type { DocumentStore } from '../../src/ports/document-store';
import { ANY, NO_STREAM } from '../../src/ports/event-store';
import { comparedWithReplay, upgraded } from '../helpers/projection-upgrade';

const t = suite('api_keys version 3: tokens an application’s cut-off bars');
const NAME = 'api_keys';

const created = (key: string, app: string | null, at: string) => ({
  type: 'ApiKeyCreated',
  data: {
    key_id: key,
    restaurant_id: 'rest_a',
    name: key,
    token_hash: `hash_${key}`,
    token_hint: key.slice(-4),
    scopes: ['CATALOG_READ'],
    type: app ? 'OAUTH' : 'API_KEY',
    application: app ? { id: app, name: app } : null,
    at,
  },
});

/** A token of app_leaky the sweep missed, the restaurant's key, the cut-off, then a token issued after. */
async function history(events: MemoryEventStore): Promise<void> {
  const add = (key: string, app: string | null, at: string) =>
    events.append(apiKeyStream(key), [created(key, app, at)], NO_STREAM);
  await add('key_missed', 'app_leaky', '2026-11-01T10:00:00.000Z');
  await add('key_other', 'app_other', '2026-11-01T10:01:00.000Z');
  await add('key_front', null, '2026-11-01T10:02:00.000Z');
  await events.append(
    applicationStream('app_leaky'),
    [
      {
        type: 'OAuthApplicationDisabled',
        data: { client_id: 'app_leaky', at: '2026-11-02T09:00:00.000Z', disconnect: true },
      },
      { type: 'OAuthApplicationEnabled', data: { client_id: 'app_leaky', at: '2026-11-02T09:05:00.000Z' } },
    ],
    ANY,
  );
  await add('key_after', 'app_leaky', '2026-11-03T10:00:00.000Z');
}

const withdrawn = async (docs: DocumentStore) =>
  Object.fromEntries(
    (await docs.collection<ApiKeyDoc>(API_KEYS).find({}, { sort: { _id: 1 } })).map((k) => [
      k._id,
      keyWithdrawn(k),
    ]),
  );

t(
  'a store built at version 2: the missed token works until version 3 takes over, then is refused',
  async () => {
    const events = new MemoryEventStore();
    const docs = new EmbeddedDocumentStore();
    await history(events);

    // The service before this change: versions 1 and 2 in its code, version 2 served.
    const before = await upgraded(events, docs, NAME, [apiKeysProjectionV1, apiKeysProjectionV2]);
    assert.is(before.aliased.resolve(API_KEYS), `${API_KEYS}_v2`);
    assert.equal(
      await withdrawn(before.aliased),
      { key_after: false, key_front: false, key_missed: false, key_other: false },
      'version 2 knows no cut-off: the token the sweep missed works',
    );
    await before.stop();

    const after = await upgraded(events, docs, NAME);
    assert.is(after.aliased.resolve(API_KEYS), `${API_KEYS}_v${apiKeysProjection.version}`);
    assert.equal(await withdrawn(after.aliased), {
      key_after: false,
      key_front: false,
      key_missed: true,
      key_other: false,
    });
    assert.is(
      (await after.aliased.collection<ApiKeyDoc>(API_KEYS).findOne({ _id: 'key_missed' }))?.cut_off_at,
      '2026-11-02T09:00:00.000Z',
    );
    const compared = await comparedWithReplay(events, after.aliased, NAME, [API_KEYS]);
    assert.equal(compared.differences, []);
    assert.is(compared.documents, 4);
    await after.stop();
  },
);

t.run();
