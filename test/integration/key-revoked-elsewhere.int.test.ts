// A key revoked (or a restaurant suspended) by another runtime on the server's DATA_DIR — what the
// operator's CLI opens beside a running embedded server — is refused by the server on its very next
// request, although the server holds that credential resolved (src/http/auth.ts caches it by token hash
// until its read models change): the request first applies the other process's commit (rt.refresh,
// seen by the WAL-index look), which changes the read models and so drops the cached credential.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createRuntime, type Runtime } from '../../src/runtime';
import { runCli } from '../helpers/cli-in-process';
import { demoBootstrap, startTestService, type TestService } from '../helpers/service';

const KEY = 'couvert_pk_elsewhere_0000000000000001';
const OTHER = 'couvert_pk_elsewhere_0000000000000002';

const t = suite<{ svc: TestService; cli: Runtime }>('a credential changed by another process');
t.before(async (ctx) => {
  ctx.svc = await startTestService({
    env: { ROLES: 'api' },
    bootstrap: demoBootstrap({}, [
      { id: 'key_revoked', token: KEY, scopes: ['CATALOG_READ'] },
      { id: 'key_kept', token: OTHER, scopes: ['CATALOG_READ'] },
    ]),
  });
  // As the CLI opens it: its own log connection and read models, no lock on DATA_DIR.
  ctx.cli = await createRuntime(loadConfig({ DATA_DIR: ctx.svc.dataDir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
});
t.after(async ({ svc, cli }) => {
  await cli.close();
  await svc.close();
});

t('a key revoked by the other process answers 401 on the next request', async ({ svc, cli }) => {
  // Twice: the second answer comes from the resolved credential the server keeps.
  for (const _ of [1, 2]) assert.is((await svc.api('GET', '/me', { token: KEY })).status, 200);
  assert.equal(await runCli(cli, 'keys revoke', { id: 'key_revoked' }), ['key revoked']);
  const res = await svc.api('GET', '/me', { token: KEY });
  assert.is(res.status, 401);
  assert.is(res.body.error.code, 'INVALID_AUTHENTICATION');
  assert.is((await svc.api('GET', '/me', { token: OTHER })).status, 200, 'another key is untouched');
});

t('a restaurant suspended by the other process answers 403 on the next request', async ({ svc, cli }) => {
  for (const _ of [1, 2]) assert.is((await svc.api('GET', '/me', { token: OTHER })).status, 200);
  await runCli(cli, 'restaurants suspend', { id: 'rest_demo', reason: 'unpaid' });
  const res = await svc.api('GET', '/me', { token: OTHER });
  assert.is(res.status, 403);
  assert.is(res.body.error.code, 'RESTAURANT_SUSPENDED');
});

t.run();
