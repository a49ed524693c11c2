// OAuth at the command level, for integration tests that need an application and its tokens without
// the browser flow: register an application, and run a consent's code through the exchange.
import { loadApplication, registerApplication } from '../../commands/oauth/application-handler';
import { issueCode, redeemCode } from '../../commands/oauth/token-handler';
import { createUser, loadUser, setRestaurantAccess } from '../../commands/oauth/user-handler';
import { API_KEYS, type ApiKeyDoc } from '../../projections/api-keys';
import { operatorMeta } from '../../src/core/command-meta';
import type { Scope } from '../../src/core/scopes';
import type { WriteDeps } from '../../src/core/write-deps';
import type { Runtime } from '../../src/runtime';
import { pkce } from './oauth';

export const APP_CALLBACK = 'https://till.example/cb';
const meta = operatorMeta('test');

export const registerTestApplication = (rt: Runtime, clientId: string, scopes: Scope[], published = false) =>
  registerApplication(
    rt,
    {
      clientId,
      profile: {
        name: clientId,
        logo_url: null,
        redirect_uris: [APP_CALLBACK],
        allowed_scopes: scopes,
        published_by_operator: published,
      },
    },
    meta,
  );

export const TEST_MANAGER = 'manager@till.example';

/**
 * The id of a user who manages `restaurant`'s integrations (created once): the exchange checks that the
 * manager who consented still does.
 */
export async function testManager(rt: Runtime, restaurant: string): Promise<string> {
  if (!(await loadUser(rt, TEST_MANAGER)).user_id)
    await createUser(rt, TEST_MANAGER, 'a test manager password', meta);
  const out = await setRestaurantAccess(
    rt,
    TEST_MANAGER,
    { restaurant_id: restaurant, manage_integrations: true },
    meta,
  );
  return out.state.user_id as string;
}

/** A manager's consent for `scopes` at `restaurant`: the code and its verifier. */
export async function consentedCode(rt: Runtime, clientId: string, restaurant: string, scopes: Scope[]) {
  const { verifier, challenge } = pkce();
  const request = {
    client_id: clientId,
    redirect_uri: APP_CALLBACK,
    scopes,
    state: 's',
    code_challenge: challenge,
    restaurant_hint: null,
  };
  const { code } = await issueCode(rt, request, restaurant, await testManager(rt, restaurant), meta);
  return { code, verifier };
}

/** The code's exchange, through `deps` (a hooked store, say): the issued token. */
export async function exchangeCode(
  rt: Runtime,
  clientId: string,
  consented: { code: string; verifier: string },
  deps: WriteDeps = rt,
) {
  const app = await loadApplication(rt, clientId);
  return redeemCode(
    deps,
    app,
    { code: consented.code, redirect_uri: APP_CALLBACK, code_verifier: consented.verifier },
    meta,
  );
}

/** Consent and exchange in one: a token of `clientId` at `restaurant`. */
export const issueToken = async (
  rt: Runtime,
  clientId: string,
  restaurant: string,
  scopes: Scope[],
  deps: WriteDeps = rt,
) => exchangeCode(rt, clientId, await consentedCode(rt, clientId, restaurant, scopes), deps);

/** The ids of `restaurant`'s API keys not revoked (tokens included), sorted, once the read models caught up. */
export async function activeKeyIds(rt: Runtime, restaurant: string): Promise<string[]> {
  await rt.projections.catchUp();
  return (await rt.docs.collection<ApiKeyDoc>(API_KEYS).find({ restaurant_id: restaurant, revoked_at: null }))
    .map((k) => k._id)
    .sort();
}
