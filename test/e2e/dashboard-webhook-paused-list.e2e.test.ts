// The dashboard's list of webhook endpoints asks the API option's rule once for the page (one lookup of
// the applications its keys belong to), not once per key one after the other; and it still reads
// Paused for a third-party application's endpoint while the option is off, Enabled for a published
// application's and for the restaurant's own key's, Disabled for one the manager disabled. No
// deliveries are made (no webhooks role): the URLs name loopback only.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OAUTH_APPLICATIONS } from '../../projections/oauth-applications';
import type { DocumentStore } from '../../src/ports/document-store';
import { runCli } from '../helpers/cli-in-process';
import {
  authorizeQuery,
  Browser,
  CALLBACK,
  consent,
  oauthBootstrap,
  pageText,
  pkce,
  SECRETS,
  signIn,
  tokenRequest,
} from '../helpers/oauth';
import { startTestService, type TestService } from '../helpers/service';

const OWN = 'couvert_pk_own_key_paused_list_0123456789abcdefgh';
const HOOK = 'http://127.0.0.1:9/hook';

const t = suite<{ svc: TestService }>('dashboard webhooks: the list asks the API option once');

t.before(async (ctx) => {
  const bootstrap = oauthBootstrap() as ReturnType<typeof oauthBootstrap> & {
    restaurants: Record<string, unknown>[];
    oauth_applications: { client_id: string; allowed_scopes: string[] }[];
  };
  Object.assign(bootstrap.restaurants[0] as object, {
    api_keys: [
      { id: 'key_own', name: 'Own key', token: OWN, scopes: ['RESERVATIONS_READ', 'WEBHOOKS_WRITE'] },
    ],
  });
  // The published application subscribes endpoints too.
  bootstrap.oauth_applications
    .find((a) => a.client_id === 'app_pub')
    ?.allowed_scopes.push('RESERVATIONS_READ', 'WEBHOOKS_WRITE');
  ctx.svc = await startTestService({ bootstrap, env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
});
t.after(async ({ svc }) => {
  await svc?.close();
});

async function tokenOf(svc: TestService, client: 'app_demo' | 'app_pub'): Promise<string> {
  const b = new Browser(svc.url);
  const { verifier, challenge } = pkce();
  const back = await consent(b, {
    query: authorizeQuery({ client_id: client, challenge, scope: 'RESERVATIONS_READ WEBHOOKS_WRITE' }),
    restaurant: 'rest_demo',
  });
  const res = await tokenRequest(
    svc.url,
    {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') as string,
      redirect_uri: CALLBACK,
      code_verifier: verifier,
    },
    { client: [client, SECRETS[client]] },
  );
  assert.is(res.status, 200, res.text);
  return res.body.access_token as string;
}

/** Counts the reads of the applications' read model while `fn` runs (the page's lookups). */
async function applicationReads(docs: DocumentStore, fn: () => Promise<void>): Promise<number> {
  let reads = 0;
  const collection = docs.collection.bind(docs);
  docs.collection = ((name: string) => {
    const c = collection(name);
    if (name !== OAUTH_APPLICATIONS) return c;
    return Object.assign(Object.create(c), {
      find: (...args: unknown[]) => {
        reads++;
        return (c.find as (...a: unknown[]) => unknown)(...args);
      },
      findOne: (...args: unknown[]) => {
        reads++;
        return (c.findOne as (...a: unknown[]) => unknown)(...args);
      },
    });
  }) as DocumentStore['collection'];
  try {
    await fn();
  } finally {
    docs.collection = collection;
  }
  return reads;
}

t('Paused, Enabled and Disabled as before, from one lookup of the applications', async ({ svc }) => {
  const make = async (token: string) => {
    const made = await svc.api('POST', '/webhook-endpoints', { token, body: { url: HOOK } });
    assert.is(made.status, 201, made.text);
    return made.body.data.id as string;
  };
  // Three tokens of the third-party application (each its own key), two of the published one.
  const thirdParty = [
    await make(await tokenOf(svc, 'app_demo')),
    await make(await tokenOf(svc, 'app_demo')),
    await make(await tokenOf(svc, 'app_demo')),
  ];
  const published = [await make(await tokenOf(svc, 'app_pub')), await make(await tokenOf(svc, 'app_pub'))];
  const own = await make(OWN);
  const disabledToken = await tokenOf(svc, 'app_pub');
  const disabled = await make(disabledToken);
  const off = await svc.api('PATCH', `/webhook-endpoints/${disabled}`, {
    token: disabledToken,
    body: { disabled: true },
  });
  assert.is(off.status, 200, off.text);

  const b = new Browser(svc.url);
  assert.is((await signIn(b, await b.get('/sign-in'), 'solo@demo.test')).status, 303);
  /** Each endpoint's badge on the list, as read. */
  const badges = async () => {
    const list = (await b.get('/dashboard/webhooks?restaurant=rest_demo')).text;
    const badge = (id: string) => {
      const li = list.split('<li>').find((x) => x.includes(`/dashboard/webhooks/${id}?`)) ?? '';
      return pageText(li.split('</li>')[0] as string);
    };
    return new Map([...thirdParty, ...published, own, disabled].map((id) => [id, badge(id)]));
  };
  const expect = (shown: Map<string, string>, paused: boolean) => {
    for (const id of thirdParty) {
      assert.match(shown.get(id) as string, paused ? /Paused/ : /Enabled/, id);
      assert.not.match(shown.get(id) as string, paused ? /Enabled/ : /Paused/, id);
    }
    for (const id of [...published, own]) {
      assert.match(shown.get(id) as string, /Enabled/, id);
      assert.not.match(shown.get(id) as string, /Paused/, id);
    }
    assert.match(shown.get(disabled) as string, /Disabled/);
    assert.not.match(shown.get(disabled) as string, /Paused|Enabled/);
  };

  let shown = new Map<string, string>();
  assert.is(
    await applicationReads(svc.rt.docs, async () => {
      shown = await badges();
    }),
    0,
    'the option on decides alone',
  );
  expect(shown, false);

  await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'false' });
  try {
    const reads = await applicationReads(svc.rt.docs, async () => {
      shown = await badges();
    });
    expect(shown, true);
    assert.is(reads, 1, 'one lookup of the applications for the page, not one per key');
  } finally {
    await runCli(svc, 'restaurants api-option', { id: 'rest_demo', enabled: 'true' });
  }
  expect(await badges(), false);
});

t.run();
