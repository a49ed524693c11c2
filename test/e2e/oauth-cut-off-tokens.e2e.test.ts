// `applications disable --disconnect` records a cut-off, then revokes the application's tokens by a sweep
// of its connections. A token the sweep has not reached (the CLI stopped midway; scaled out, a sweep
// that read connections from a lagging projector) must not keep working meanwhile: every API call
// refuses a token of the application issued before its latest cut-off, with the revoked token's 401,
// from the cut-off on. Here the sweep is held back altogether: only the cut-off is recorded, as a CLI
// that crashed right after it leaves it. A token issued after `applications enable` works; a
// restaurant's own API key is no application's and is untouched.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { setApplicationDisabled } from '../../commands/oauth/application-handler';
import { operatorMeta } from '../../src/core/command-meta';
import { runCli } from '../helpers/cli-in-process';
import { oauthBootstrapWith } from '../helpers/oauth';
import { issueToken } from '../helpers/oauth-commands';
import { startTestService, type TestService } from '../helpers/service';

const FRONT = 'couvert_pk_front_desk_cut_off_0123456789abcdefgh';

const t = suite<{ svc: TestService }>('OAuth: a token issued before its application’s cut-off');

t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: oauthBootstrapWith({
      api_keys: [{ id: 'key_front', name: 'Front desk', token: FRONT, scopes: ['CATALOG_READ'] }],
    }),
    env: { ROLES: 'api,projector' },
  });
});
t.after(async ({ svc }) => {
  await svc?.close();
});

const me = (svc: TestService, token: string) => svc.api('GET', '/me', { token });

t(
  'the sweep held back: the token is refused at once, as a revoked one; a token issued after enable works',
  async ({ svc }) => {
    const { rt } = svc;
    const before = await issueToken(rt, 'app_demo', 'rest_demo', ['CATALOG_READ']);
    const other = await issueToken(rt, 'app_pub', 'rest_demo', ['CATALOG_READ']);
    await rt.settle(other.position);
    assert.is((await me(svc, before.token)).status, 200);

    // Only the cut-off (OAuthApplicationDisabled with disconnect): no connection swept, no token revoked.
    const cut = await setApplicationDisabled(rt, 'app_demo', true, operatorMeta('test'), true);
    await rt.settle(cut.position);

    const refused = await me(svc, before.token);
    assert.is(refused.status, 401, 'the token the sweep has not reached');
    const error = (refused.body as { error: { code: string; message: string } }).error;
    assert.is(error.code, 'INVALID_AUTHENTICATION');
    assert.match(error.message, /^The token is invalid, revoked or disconnected: /, 'as a revoked token');
    assert.is(refused.headers.get('www-authenticate')?.includes('invalid_token'), true);
    // Another application and the restaurant's own key are not this application's.
    assert.is((await me(svc, other.token)).status, 200, 'another application');
    assert.is((await me(svc, FRONT)).status, 200, 'an API key');

    const enabled = await runCli(svc, 'applications enable', { 'client-id': 'app_demo' });
    assert.equal(enabled, ['enabled application app_demo']);
    const after = await issueToken(rt, 'app_demo', 'rest_demo', ['CATALOG_READ']);
    await rt.settle(after.position);
    assert.is((await me(svc, after.token)).status, 200, 'issued after the cut-off');
    assert.is((await me(svc, before.token)).status, 401, 'enabling again does not undo the cut-off');

    // The sweep, run again, finds the token it missed and revokes it: the refusal does not change.
    const swept = await runCli(svc, 'applications disable', { 'client-id': 'app_demo', disconnect: true });
    assert.ok(
      swept.some((l) => l.includes(before.keyId)),
      swept.join('\n'),
    );
    assert.is((await me(svc, before.token)).status, 401);
    assert.is((await me(svc, after.token)).status, 401, 'the new cut-off bars the later token too');
    assert.is((await me(svc, FRONT)).status, 200);
  },
);

t.run();
