// Every variable of DESIGN.md §3 and the README's table: its default, and a bad value stopping the
// start with a message that names it (and never echoes a password).
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../src/config';
import { maskCredentials } from '../../src/core/urls';
import type { Runtime } from '../../src/runtime';
import { cookieName } from '../../src/web/sessions';

const t = suite<{ dir: string; file: string }>('configuration');
t.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-config-'));
  ctx.file = join(ctx.dir, 'bootstrap.json');
  writeFileSync(ctx.file, '{}');
});
t.after(({ dir }) => rmSync(dir, { recursive: true, force: true }));

const SCALED = {
  STORE: 'eventstoredb',
  EVENTSTORE_URL: 'esdb://es:2113?tls=false',
  MONGODB_URL: 'mongodb://db',
  SECRETS_KEY: 'ab'.repeat(32),
};

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError, JSON.stringify(env));
    return (err as Error).message;
  }
  assert.unreachable(`${JSON.stringify(env)} accepted`);
  return '';
}

t('the README table lists each variable once (two rows of BODY_TIMEOUT_MS said different maximums)', () => {
  const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
  const names = [...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` +\|/gm)].map((m) => m[1] as string);
  assert.ok(names.includes('BODY_TIMEOUT_MS'));
  assert.equal(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
  );
  // The limits said are those config.ts enforces.
  assert.match(readme, /\| `BODY_TIMEOUT_MS` +\| 30000 +\| [^|\n]*\(100–230000:/);
});

t('defaults are the README table', () => {
  const c = loadConfig({});
  assert.equal(
    { ...c, roles: [...c.roles].sort() },
    {
      port: 3000,
      host: '127.0.0.1',
      baseUrl: 'http://127.0.0.1:3000',
      dataDir: './data',
      store: 'embedded',
      eventstoreUrl: null,
      mongodbUrl: null,
      mongodbDb: 'couvert',
      bootstrapFile: null,
      rateLimitPerMinute: 600,
      oauthTokenRateLimitPerMinute: 60,
      signInAttemptsPerIp: 30,
      signInFailuresPerAccount: 10,
      webhookAllowPrivateTargets: false,
      testClock: false,
      trustProxy: false,
      readYourWritesTimeoutMs: 2000,
      logLevel: 'info',
      roles: ['api', 'projector', 'scheduler', 'webhooks'],
      secretsKey: null,
      bodyLimitBytes: 1_000_000,
      bodyTimeoutMs: 30_000,
      importUploadsMaxBytes: 100 * 1024 * 1024,
      importThread: true,
      whatsapp: null,
      warnings: [],
    },
  );
  assert.equal([...loadConfig(SCALED).roles], ['api']);
  assert.is(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).baseUrl, 'http://0.0.0.0:8080');
  // An empty number, boolean or list is the default (compose files write `X:` for "unset").
  const blank = loadConfig({ PORT: '', TEST_CLOCK: '', ROLES: '', LOG_LEVEL: '', BOOTSTRAP_FILE: '' });
  assert.is(blank.port, 3000);
  assert.is(blank.roles.size, 4);
  assert.is(blank.bootstrapFile, null);
});

t('a bad value of any variable throws ConfigError naming it', ({ dir }) => {
  const bad: Record<string, string[]> = {
    PORT: ['eighty', '70000', '-1', '80.5'],
    HOST: [
      'no such host!',
      '',
      '  ',
      '999.1.1.1',
      '-dash.example',
      'a..b',
      'host_name',
      `${'x'.repeat(64)}.com`,
    ],
    BASE_URL: [
      'ftp://x',
      'not a url',
      'https://x/?a=1',
      'https://x/?',
      'https://x/#f',
      'https://u:p@x',
      'https://u@x',
    ],
    DATA_DIR: ['', '  ', 'a\0b', join(dir, 'bootstrap.json')],
    STORE: ['postgres', 'EMBEDDED'],
    EVENTSTORE_URL: ['http://x', 'esdb://a:2113,'],
    MONGODB_URL: ['nope', 'postgres://db', 'mongodb://db:xx/'],
    MONGODB_DB: ['', 'a/b', 'a\\b', 'a.b', 'a"b', 'a$b', 'a b', 'a\0b', 'x'.repeat(64), 'é'.repeat(32)],
    BOOTSTRAP_FILE: [join(dir, 'missing.json'), dir],
    RATE_LIMIT_PER_MINUTE: ['0', 'lots'],
    OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE: ['-1', '0'],
    SIGN_IN_RATE_LIMIT_PER_IP: ['0', 'x'],
    SIGN_IN_FAILURES_PER_ACCOUNT: ['0', '10001'],
    WEBHOOK_ALLOW_PRIVATE_TARGETS: ['maybe'],
    TEST_CLOCK: ['yes please'],
    LOG_LEVEL: ['verbose'],
    ROLES: ['api,web', 'webhook', 'api,,projector'],
    SECRETS_KEY: ['short', 'zz'.repeat(32)],
    TRUST_PROXY: ['sometimes'],
    BODY_LIMIT_BYTES: ['100', '1e6'],
    BODY_TIMEOUT_MS: ['99', '230001', '300000', '30s'],
    IMPORT_UPLOADS_MAX_BYTES: ['100', '10 MB', '-1'],
    READ_YOUR_WRITES_TIMEOUT_MS: ['60001', 'soon'],
    // The scheduler's settings, checked whatever ROLES says (a process without the scheduler ignored them).
    NO_SHOW_GRACE_MINUTES: ['abc', '10081', '-5'],
    SEATING_REPAIR_AFTER_MINUTES: ['0', 'later'],
    IMPORT_THREAD: ['on'],
  };
  for (const [name, values] of Object.entries(bad))
    for (const value of values) {
      const message = refusal({ [name]: value });
      assert.ok(message.includes(name), `${name}=${JSON.stringify(value)}: "${message}" does not name it`);
    }
  assert.match(refusal({ STORE: 'eventstoredb' }), 'EVENTSTORE_URL');
  assert.match(refusal({ ...SCALED, MONGODB_URL: '' }), /missing: MONGODB_URL/);
  assert.match(refusal({ ...SCALED, SECRETS_KEY: '' }), /SECRETS_KEY must be set when STORE=eventstoredb/);
});

t('the scheduler settings are checked by a process whatever its ROLES (an API-only one ignored them)', () => {
  for (const ROLES of ['api', 'api,projector,webhooks', 'scheduler'])
    for (const [name, value] of [
      ['NO_SHOW_GRACE_MINUTES', 'abc'],
      ['SEATING_REPAIR_AFTER_MINUTES', '0'],
    ] as const)
      assert.match(
        refusal({ ROLES, [name]: value }),
        `${name} must be a whole number of minutes`,
        `ROLES=${ROLES} ${name}=${value}`,
      );
  assert.not.throws(() =>
    loadConfig({ ROLES: 'api', NO_SHOW_GRACE_MINUTES: '0', SEATING_REPAIR_AFTER_MINUTES: '10080' }),
  );
});

t('every boolean variable reads the same spellings, and a refusal lists them', () => {
  const BOOLEANS = {
    TRUST_PROXY: (c: ReturnType<typeof loadConfig>) => c.trustProxy,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: (c: ReturnType<typeof loadConfig>) => c.webhookAllowPrivateTargets,
    TEST_CLOCK: (c: ReturnType<typeof loadConfig>) => c.testClock,
    IMPORT_THREAD: (c: ReturnType<typeof loadConfig>) => c.importThread,
  };
  for (const [name, read] of Object.entries(BOOLEANS)) {
    for (const yes of ['true', 'TRUE', 'True', '1', 'yes', 'YES', ' yes '])
      assert.is(read(loadConfig({ [name]: yes })), true, `${name}=${JSON.stringify(yes)}`);
    for (const no of ['false', 'FALSE', '0', 'no', 'No'])
      assert.is(read(loadConfig({ [name]: no })), false, `${name}=${JSON.stringify(no)}`);
    assert.is(
      refusal({ [name]: 'on' }),
      `${name} must be true or false (also accepted: 1 or 0, yes or no, in any case), got "on"`,
    );
  }
});

t('HOST: IP literals, localhost and host names, checked without any lookup', () => {
  for (const [value, host] of [
    ['0.0.0.0', '0.0.0.0'],
    ['::', '::'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['localhost', 'localhost'],
    ['api.internal.example', 'api.internal.example'],
    ['db-1', 'db-1'],
    ['no-such-host.invalid', 'no-such-host.invalid'],
  ])
    assert.is(loadConfig({ HOST: value as string }).host, host);
  // The default BASE_URL must be a URL: an IPv6 host goes in brackets.
  assert.is(loadConfig({ HOST: '::1', PORT: '8080' }).baseUrl, 'http://[::1]:8080');
  // Spelt as a BASE_URL given is (the issuer, OpenAPI servers, links): no default port, a small-letter host.
  assert.is(loadConfig({ HOST: '127.0.0.1', PORT: '80' }).baseUrl, 'http://127.0.0.1');
  assert.is(loadConfig({ HOST: 'Api.Internal', PORT: '8080' }).baseUrl, 'http://api.internal:8080');
  assert.match(refusal({ HOST: 'no such host!' }), 'HOST must be an IP address, localhost or a host name');
});

t('BASE_URL: a scheme written in capitals is https all the same (session cookies Secure, __Host-)', () => {
  // URL schemes are case-insensitive: `HTTPS://…` was served over https with session cookies that were
  // neither Secure nor __Host- prefixed (sessions.ts looks for "https:"), and an issuer in capitals.
  const c = loadConfig({ BASE_URL: 'HTTPS://couvert.example/' });
  assert.is(c.baseUrl, 'https://couvert.example');
  // The host in small letters and a default port dropped too: the issuer is compared as a string.
  assert.is(loadConfig({ BASE_URL: 'HTTPS://Couvert.EXAMPLE:443/' }).baseUrl, 'https://couvert.example');
  assert.is(
    loadConfig({ BASE_URL: 'http://Couvert.example:80/Base/' }).baseUrl,
    'http://couvert.example/Base',
  );
  assert.is(loadConfig({ BASE_URL: 'https://couvert.example:8443' }).baseUrl, 'https://couvert.example:8443');
  assert.is(cookieName({ config: c } as Runtime), '__Host-couvert_session');
  assert.is(
    cookieName({ config: loadConfig({ BASE_URL: 'Http://localhost:8080' }) } as Runtime),
    'couvert_session',
  );
});

t('DATA_DIR and MONGODB_DB: accepted values', ({ dir }) => {
  assert.is(loadConfig({ DATA_DIR: dir }).dataDir, dir);
  assert.is(loadConfig({ DATA_DIR: join(dir, 'not-yet') }).dataDir, join(dir, 'not-yet'));
  for (const db of ['couvert_test-1', 'x'.repeat(63), 'é'.repeat(31)])
    assert.is(loadConfig({ ...SCALED, MONGODB_DB: db }).mongodbDb, db);
});

t('several hosts in a store URL (cluster, replica set) are accepted', () => {
  const c = loadConfig({
    STORE: 'eventstoredb',
    EVENTSTORE_URL: 'esdb+discover://a:2113,b:2113?tls=false',
    MONGODB_URL: 'mongodb://u:p@a:27017,b:27017,c/?replicaSet=rs0',
    SECRETS_KEY: 'ab'.repeat(32),
  });
  assert.is(c.mongodbUrl, 'mongodb://u:p@a:27017,b:27017,c/?replicaSet=rs0');
});

t('a URL in an error message never carries its user:password', ({ file }) => {
  const cases: Record<string, string>[] = [
    { MONGODB_URL: 'mongodb://admin:S3cretPw@db:xx/' },
    { MONGODB_URL: 'http://admin:S3cretPw@db/' },
    { MONGODB_URL: 'mongodb://admin:S3c@ret@db:xx/' },
    { MONGODB_URL: 'admin:S3cretPw@db x' },
    { EVENTSTORE_URL: 'esdb://admin:S3cretPw@es:2113:99?tls=false' },
    { EVENTSTORE_URL: 'mongodb://admin:S3cretPw@es' },
    { BASE_URL: 'https://admin:S3cretPw@exa mple.com' },
    { BASE_URL: 'ftp://admin:S3cretPw@example.com', BOOTSTRAP_FILE: file },
    { BASE_URL: 'https://admin:S3cretPw@example.com' },
  ];
  for (const env of cases) {
    const message = refusal(env);
    assert.ok(message.includes(Object.keys(env)[0] as string), message);
    assert.not.match(message, /S3c|admin|ret/, message);
    assert.match(message, '***@');
  }
  assert.is(maskCredentials('mongodb://u:p@db/x'), 'mongodb://***@db/x');
  assert.is(maskCredentials('u:p@db'), '***@db');
  assert.is(maskCredentials('mongodb://db/x'), 'mongodb://db/x');
});

t('store URLs given to the embedded store are accepted but reported as warnings', () => {
  assert.equal(loadConfig({}).warnings, []);
  assert.equal(loadConfig(SCALED).warnings, []);
  const [warning, ...more] = loadConfig({
    EVENTSTORE_URL: 'esdb://es:2113',
    MONGODB_URL: 'mongodb://u:secret@db',
  }).warnings;
  assert.equal(more, []);
  assert.match(warning ?? '', /^EVENTSTORE_URL, MONGODB_URL are set but ignored: STORE is embedded/);
  assert.not.match(warning ?? '', 'secret');
  assert.match(loadConfig({ MONGODB_DB: 'other' }).warnings[0] ?? '', /^MONGODB_DB is set but ignored/);
});

t(
  'an existing DATA_DIR open to other accounts is reported as a warning (keys.sqlite would be readable)',
  ({ dir }) => {
    const owner = join(dir, 'owner-only');
    const open = join(dir, 'open');
    mkdirSync(owner, { mode: 0o700 });
    mkdirSync(open);
    chmodSync(owner, 0o700);
    chmodSync(open, 0o755);
    assert.equal(loadConfig({ DATA_DIR: owner }).warnings, []);
    assert.equal(loadConfig({ DATA_DIR: join(dir, 'missing') }).warnings, []);
    const [warning, ...more] = loadConfig({ DATA_DIR: open }).warnings;
    assert.equal(more, []);
    assert.match(warning ?? '', `DATA_DIR "${open}" is open to other accounts (mode 0755)`);
    assert.match(warning ?? '', `chmod 700 "${open}"`);
    // Scaled out nothing of the log or the keys lives there.
    assert.equal(loadConfig({ ...SCALED, DATA_DIR: open }).warnings, []);
  },
);

t(
  'TEST_CLOCK on a HOST other machines reach is reported as a warning (the clock route takes no credential)',
  () => {
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.2'])
      assert.equal(loadConfig({ TEST_CLOCK: 'true', HOST: host }).warnings, [], host);
    assert.equal(loadConfig({ HOST: '0.0.0.0' }).warnings, []);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'api.internal.example']) {
      const [warning, ...more] = loadConfig({ TEST_CLOCK: 'true', HOST: host }).warnings;
      assert.equal(more, []);
      assert.match(warning ?? '', `TEST_CLOCK is true and HOST ${host} is not a loopback address`);
    }
  },
);

t.run();
