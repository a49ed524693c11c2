// WHATSAPP_* (src/config.ts): the Cloud API is used only with a token; every other value is checked
// at start, and settings given without a token are reported, not silently ignored.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkSettings } from '../../commands/missed-calls/settings';
import { ConfigError, loadConfig } from '../../src/config';

const t = suite('WHATSAPP_* configuration');

const refusal = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

t('no token: the outbox (whatsapp null); other WHATSAPP_* values then give a warning', () => {
  assert.is(loadConfig({}).whatsapp, null);
  const c = loadConfig({ WHATSAPP_API_BASE_URL: 'https://graph.example' });
  assert.is(c.whatsapp, null);
  assert.match(c.warnings[0] ?? '', /^WHATSAPP_API_BASE_URL is set but ignored/);
});

t('a token: the Cloud API with the documented defaults', () => {
  assert.equal(loadConfig({ WHATSAPP_ACCESS_TOKEN: 'EAAGm0PX4ZCpsBA' }).whatsapp, {
    accessToken: 'EAAGm0PX4ZCpsBA',
    baseUrl: 'https://graph.facebook.com',
    apiVersion: 'v21.0',
    timeoutMs: 10_000,
    maxRetries: 2,
  });
  const custom = loadConfig({
    WHATSAPP_ACCESS_TOKEN: 'EAAGm0PX4ZCpsBA',
    WHATSAPP_API_BASE_URL: 'http://127.0.0.1:9999/',
    WHATSAPP_API_VERSION: 'v19.0',
    WHATSAPP_TIMEOUT_MS: '500',
    WHATSAPP_MAX_RETRIES: '0',
  }).whatsapp;
  assert.equal(custom, {
    accessToken: 'EAAGm0PX4ZCpsBA',
    baseUrl: 'http://127.0.0.1:9999',
    apiVersion: 'v19.0',
    timeoutMs: 500,
    maxRetries: 0,
  });
});

t('bad values stop the start, naming the variable and never printing the token', () => {
  const token = { WHATSAPP_ACCESS_TOKEN: 'EAAGm0PX4ZCpsBA' };
  assert.match(refusal({ WHATSAPP_ACCESS_TOKEN: 'short' }), 'WHATSAPP_ACCESS_TOKEN');
  assert.match(refusal({ WHATSAPP_ACCESS_TOKEN: 'has a space inside' }), 'WHATSAPP_ACCESS_TOKEN');
  assert.match(refusal({ ...token, WHATSAPP_API_VERSION: '21' }), 'WHATSAPP_API_VERSION');
  assert.match(refusal({ ...token, WHATSAPP_API_BASE_URL: 'ftp://graph.example' }), 'WHATSAPP_API_BASE_URL');
  assert.match(refusal({ ...token, WHATSAPP_API_BASE_URL: 'http://graph.example' }), 'https');
  assert.match(refusal({ ...token, WHATSAPP_API_BASE_URL: 'https://graph.example/?a=1' }), 'plain URL');
  assert.match(refusal({ ...token, WHATSAPP_TIMEOUT_MS: '0' }), 'WHATSAPP_TIMEOUT_MS');
  assert.match(refusal({ ...token, WHATSAPP_MAX_RETRIES: '9' }), 'WHATSAPP_MAX_RETRIES');
  for (const env of [
    { ...token, WHATSAPP_API_VERSION: 'x' },
    { ...token, WHATSAPP_TIMEOUT_MS: 'x' },
  ])
    assert.not.match(refusal(env), token.WHATSAPP_ACCESS_TOKEN);
});

t('restaurant settings: a numeric phone number id and an http(s) booking link', () => {
  assert.equal(
    checkSettings({ whatsapp_phone_number_id: '106540352242922', booking_url: 'https://a.example/b' }),
    [],
  );
  assert.equal(checkSettings({ whatsapp_phone_number_id: null, booking_url: null }), []);
  assert.equal(
    checkSettings({ whatsapp_phone_number_id: '+33 6 12', booking_url: 'javascript:alert(1)' }).map(
      (i) => i.path,
    ),
    ['whatsapp_phone_number_id', 'booking_url'],
  );
});

t(
  'restaurant settings: a booking link sent to every caller carries no credentials and no white space',
  () => {
    for (const url of [
      'https://owner:s3cret@booking.example/le-demo',
      'https://token@booking.example/le-demo',
      'https://booking.example/le demo',
      'https://booking.example/le-demo\nfoo',
      'https://booking.example/\tle-demo',
    ])
      assert.equal(
        checkSettings({ booking_url: url }).map((i) => [i.path, i.code]),
        [['booking_url', 'invalid_format']],
        url,
      );
    // Only the message says why; the URL (and so the password) is never repeated in it.
    const [issue] = checkSettings({ booking_url: 'https://owner:s3cret@booking.example/' });
    assert.not.match(issue?.message ?? '', /s3cret/);
    assert.match(issue?.message ?? '', /user name or password/);
    assert.equal(checkSettings({ booking_url: 'https://booking.example/le-demo?utm_source=whatsapp' }), []);
  },
);

t.run();
