// Custom header values as secrets (commands/webhook-endpoints/header-secrets.ts): sealed one by one,
// opened for a delivery (a value an older version wrote in clear as it is), masked for every answer,
// and a save sending the mask back keeps the value.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  headersSealed,
  maskedHeaders,
  openHeaders,
  REDACTED_HEADER_VALUE,
  resolveKeptHeaders,
  sealHeaders,
  withClearHeadersMasked,
} from '../../commands/webhook-endpoints/header-secrets';
import { changesOf, withoutSecrets } from '../../src/audit/changes';
import { ApiError } from '../../src/core/errors';
import { SecretBox } from '../../src/secrets';

const t = suite('webhook custom header values: sealed, masked, kept');
const box = new SecretBox(randomBytes(32));
const value = fc.stringMatching(/^[\x20-\x7e\t]{0,40}$/);
const headers = fc.dictionary(fc.stringMatching(/^X-[A-Za-z0-9-]{1,12}$/), value, { maxKeys: 5 });

t('sealed values open to what was sealed, hold none of it, and read as sealed', () => {
  fc.assert(
    fc.property(headers, (h) => {
      const sealed = sealHeaders(h, box);
      assert.equal(Object.keys(sealed), Object.keys(h));
      assert.ok(headersSealed(sealed));
      for (const [n, v] of Object.entries(h)) if (v.length >= 4) assert.not.ok(sealed[n]?.includes(v));
      assert.equal(openHeaders(sealed, box), { ...h });
    }),
  );
});

t('values written in clear before the sealing are sent as they are', () => {
  const clear = { 'X-Api-Key': 'hdr-secret-value-123' };
  assert.not.ok(headersSealed(clear));
  assert.equal(openHeaders(clear, box), clear);
});

t('a sealed value of another key throws (as the signing secret does), never sent as its box', () => {
  const other = sealHeaders({ 'X-Api-Key': 'k' }, new SecretBox(randomBytes(32)));
  assert.throws(() => openHeaders(other, box));
});

t('masked: names kept, every value [redacted]', () => {
  assert.equal(maskedHeaders({ 'X-A': 'secret', 'X-B': '' }), { 'X-A': '[redacted]', 'X-B': '[redacted]' });
});

t(
  '[redacted] keeps the current value of that name, case-insensitively; 400 for a name the endpoint has not',
  () => {
    assert.equal(
      resolveKeptHeaders({ 'x-api-key': REDACTED_HEADER_VALUE, 'X-New': 'n' }, { 'X-Api-Key': 'k' }),
      {
        'x-api-key': 'k',
        'X-New': 'n',
      },
    );
    const err = (() => {
      try {
        resolveKeptHeaders({ 'X-Gone': REDACTED_HEADER_VALUE }, { 'X-Api-Key': 'k' });
      } catch (e) {
        return e;
      }
    })();
    assert.ok(err instanceof ApiError);
    assert.is((err as ApiError).status, 400);
  },
);

t('audit history and as-of redact header values, sealed or in clear, and keep the names', () => {
  const created = {
    type: 'WebhookEndpointCreated',
    data: { endpoint_id: 'we_1', url: 'https://x', headers: { 'X-Api-Key': 'clear-value' } },
  };
  const shown = changesOf(created, 'we_1').find((c) => c.field === 'headers');
  assert.equal(shown?.to, { 'X-Api-Key': '[redacted]' });
  const updated = {
    type: 'WebhookEndpointUpdated',
    data: {
      endpoint_id: 'we_1',
      changes: { headers: sealHeaders({ 'X-Api-Key': 'new' }, box) },
      previous: { headers: { 'X-Api-Key': 'old-clear' } },
    },
  };
  const change = changesOf(updated, 'we_1').find((c) => c.field === 'headers');
  assert.equal(change, {
    field: 'headers',
    from: { 'X-Api-Key': '[redacted]' },
    to: { 'X-Api-Key': '[redacted]' },
  });
  assert.equal(withoutSecrets({ endpoint: { headers: { 'X-A': 'v' }, url: 'u' } }), {
    endpoint: { headers: { 'X-A': '[redacted]' }, url: 'u' },
  });
});

t('audit export: values in clear masked, boxes kept, anything else the same object', () => {
  const sealed = sealHeaders({ 'X-A': 'v' }, box);
  const data = { endpoint_id: 'we_1', headers: sealed };
  assert.is(withClearHeadersMasked('WebhookEndpointCreated', data), data);
  const other = { headers: { 'X-A': 'v' } };
  assert.is(withClearHeadersMasked('CustomerCreated', other), other);
  assert.equal(
    withClearHeadersMasked('WebhookEndpointCreated', { a: 1, headers: { 'X-A': 'v', 'X-B': sealed['X-A'] } }),
    {
      a: 1,
      headers: { 'X-A': '[redacted]', 'X-B': sealed['X-A'] },
    },
  );
  const upd = {
    changes: { headers: { 'X-A': 'n' }, url: 'u' },
    previous: { headers: { 'X-A': 'o' } },
    at: 't',
  };
  const out = withClearHeadersMasked('WebhookEndpointUpdated', upd);
  assert.equal(out, {
    changes: { headers: { 'X-A': '[redacted]' }, url: 'u' },
    previous: { headers: { 'X-A': '[redacted]' } },
    at: 't',
  });
  assert.equal(
    Object.keys(out),
    Object.keys(upd),
    'the keys keep their order (both export paths write the same bytes)',
  );
});

t.run();
