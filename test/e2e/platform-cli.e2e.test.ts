// The operator CLI as an operator runs it (its own process, `node src/cli/main.ts`) on the data
// directory of a running server: the server answers differently on its very next request, and a
// refused command exits non-zero having appended nothing.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { apiKeyUsageStream } from '../../commands/credentials/usage';
import { runCli } from '../helpers/cli-process';
import { demoBootstrap, REQUEST_HANG_MS, startTestService, type TestService } from '../helpers/service';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DESIGN_EXAMPLE = join(root, 'test/fixtures/design-bootstrap.json');
const TOKEN = 'couvert_pk_cli_00000000000000000000000000001';

const t = suite<{ svc: TestService }>('operator CLI beside a running server');
t.before(async (ctx) => {
  ctx.svc = await startTestService({
    bootstrap: demoBootstrap({}, [{ id: 'key_cli', token: TOKEN, scopes: ['CATALOG_READ'] }]),
  });
});
t.after(async ({ svc }) => svc.close());

const cli = runCli;

const me = (svc: TestService, token = TOKEN) => svc.api('GET', '/me', { token });

t('suspend: the very next request is 403 RESTAURANT_SUSPENDED; resume: 200 again', async ({ svc }) => {
  assert.is((await me(svc)).status, 200);
  const suspended = await cli(svc, ['restaurants', 'suspend', '--id', 'rest_demo', '--reason', 'unpaid']);
  assert.equal(suspended, { code: 0, stdout: 'suspended restaurant rest_demo\n', stderr: '' });
  const refused = await me(svc);
  assert.is(refused.status, 403);
  assert.is(refused.body.error.code, 'RESTAURANT_SUSPENDED');
  const resumed = await cli(svc, ['restaurants', 'resume', '--id', 'rest_demo']);
  assert.equal(resumed, { code: 0, stdout: 'resumed restaurant rest_demo\n', stderr: '' });
  assert.is((await me(svc)).status, 200);
});

t('usage errors exit non-zero with a clear message and append nothing', async ({ svc }) => {
  const head = await svc.rt.events.headPosition();
  const create = ['restaurants', 'create', '--id', 'rest_new', '--name', 'New', '--slug', 'new'];
  const good = { country: 'FR', timezone: 'Europe/Paris', currency: 'EUR' };
  const withProfile = (o: Partial<typeof good>) =>
    [...create, ...Object.entries({ ...good, ...o }).flatMap(([k, v]) => [`--${k}`, v])] as string[];
  const cases: [string[], RegExp][] = [
    [['restaurants', 'suspend', '--id', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    [
      ['restaurants', 'update', '--id', 'rest_nope', '--name', 'N'],
      /^error: restaurant rest_nope not found$/m,
    ],
    // A list filtered on a mistyped restaurant answered nothing, exit 0 ("no keys"); a disconnect said
    // the application "had no active token" there.
    [['keys', 'list', '--restaurant', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    [['webhooks', 'endpoints', '--restaurant', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    [['connections', 'list', '--restaurant', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    // analytics export called it a usage error ("no restaurant rest_nope", "run with --help").
    [['analytics', 'export', '--restaurant', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    [
      ['analytics', 'export', '--restaurant', 'rest_nope', '--dataset', 'webhooks'],
      /^error: restaurant rest_nope not found$/m,
    ],
    [['catalog', 'show', '--restaurant', 'rest_nope'], /^error: restaurant rest_nope not found$/m],
    [
      ['connections', 'disconnect', '--restaurant', 'rest_nope', '--client-id', 'app_x'],
      /^error: restaurant rest_nope not found$/m,
    ],
  ];
  const runs = await Promise.all(cases.map(([args]) => cli(svc, args)));
  for (const [i, run] of runs.entries()) {
    const [args, expected] = cases[i] as [string[], RegExp];
    assert.is(run.code, 1, `${args.join(' ')}: exit ${run.code}`);
    assert.match(run.stderr, expected, `${args.join(' ')}: ${run.stderr}`);
    assert.is(run.stdout, '');
  }
  // A flag missing or a value the CLI refuses is a usage error: exit 2, not the 1 of a restaurant not found.
  const usage: [string[], RegExp][] = [
    [create, /^error: --country, --timezone, --currency are required$/m],
    [withProfile({ country: 'France' }), /^ {2}--country: country_code must be an ISO 3166-1 alpha-2 code/m],
    [withProfile({ timezone: 'Mars/Olympus' }), /^ {2}--timezone: timezone must be an IANA time zone/m],
    [withProfile({ currency: 'euro' }), /^ {2}--currency: currency must be an ISO 4217 code/m],
  ];
  for (const [args, expected] of usage) {
    const run = await cli(svc, args);
    assert.is(run.code, 2, `${args.join(' ')}: exit ${run.code}`);
    assert.match(run.stderr, expected, `${args.join(' ')}: ${run.stderr}`);
    assert.is(run.stdout, '');
  }
  assert.is(await svc.rt.events.headPosition(), head);
  assert.is((await me(svc)).status, 200);
});

t('bootstrap apply and read-models rebuild beside the server', async ({ svc }) => {
  const first = await cli(svc, ['bootstrap', 'apply', DESIGN_EXAMPLE]);
  assert.is(first.code, 0, first.stderr);
  assert.match(first.stdout, /: \d+ event\(s\) appended\n/);
  assert.match(first.stdout, /note: users: 1 created or changed/);
  // The file's key works on the server's very next request.
  const used = await me(svc, 'couvert_pk_demo_0001');
  assert.is(used.status, 200);
  // Its first use is recorded ("last used", off the request path): wait for it before taking the head.
  // (Until a hang bound: after 100 looks 20 ms apart it went on, and a use recorded after the head
  // was taken moved the head the test then compares.)
  const usage = apiKeyUsageStream(used.body.data.credential.id);
  for (const end = Date.now() + REQUEST_HANG_MS; (await svc.rt.events.readStream(usage)).length === 0; ) {
    if (Date.now() > end) assert.unreachable('the key’s first use was never recorded');
    await new Promise((r) => setTimeout(r, 20));
  }
  const head = await svc.rt.events.headPosition();
  const second = await cli(svc, ['bootstrap', 'apply', DESIGN_EXAMPLE]);
  assert.match(second.stdout, /already applied, nothing appended/);

  const rebuild = await cli(svc, ['read-models', 'rebuild', '--no-progress']);
  assert.is(rebuild.code, 0, rebuild.stderr);
  assert.match(rebuild.stdout, /live in the server process and are rebuilt from the event log at each start/);
  assert.match(rebuild.stdout, /consistency check passed: replayed \d+ events/);
  assert.is(await svc.rt.events.headPosition(), head);
  assert.is((await me(svc)).status, 200);
});

t.run();
