// The webhook rules, directly: retry schedule, SSRF address rules, signatures, header rules, sealed
// secrets, previous_attributes.
import { randomBytes } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { type AddressInfo, createServer } from 'node:net';
import fc from 'fast-check';
import Stripe from 'stripe';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkSettings,
  decideRotateSecret,
  type EndpointState,
  evolveEndpoint,
  headerIssues,
  initialEndpoint,
  MAX_EARLIER_SECRETS,
  oldSecretsSigning,
  previousSecretSigns,
  readableTypes,
  readScopeOf,
  refusedBySettings,
  scopesReadDelivery,
} from '../../commands/webhook-endpoints/decide';
import { V1_EVENT_TYPES } from '../../commands/webhook-endpoints/events';
import type { ApiError, Issue } from '../../src/core/errors';
import { parseSecretsKey, SecretBox } from '../../src/secrets';
import { type AttemptRequest, sendAttempt } from '../../src/webhooks/deliver';
import { responseExcerpt } from '../../src/webhooks/excerpt';
import { previousAttributes } from '../../src/webhooks/payloads';
import {
  classifyAttempt,
  JITTER_SHARE,
  MAX_ATTEMPTS,
  nextStep,
  RETRY_OFFSETS_SECONDS,
} from '../../src/webhooks/schedule';
import { generateSigningSecret, signatureHeader } from '../../src/webhooks/signature';
import {
  BlockedTargetError,
  guardedLookup,
  isPublicAddress,
  targetUrlProblem,
} from '../../src/webhooks/target';

const t = suite('webhooks: rules');

t(
  'retry classes: 2xx success; 5xx, 408, 429, network errors and timeouts retried; anything else final',
  () => {
    const cases: [number | null, 'timeout' | 'network' | 'blocked_target' | null, string][] = [
      [200, null, 'success'],
      [204, null, 'success'],
      [500, null, 'retryable'],
      [503, null, 'retryable'],
      [408, null, 'retryable'],
      [429, null, 'retryable'],
      [null, 'timeout', 'retryable'],
      [null, 'network', 'retryable'],
      [null, 'blocked_target', 'final'],
      [400, null, 'final'],
      [401, null, 'final'],
      [404, null, 'final'],
      [410, null, 'final'],
      [301, null, 'final'],
      [302, null, 'final'],
      [100, null, 'final'],
    ];
    for (const [status, error, expected] of cases)
      assert.is(classifyAttempt({ status, error }), expected, `${status} ${error}`);
  },
);

t('the schedule starts within seconds and ends between 3 and 5 hours after the first attempt', () => {
  assert.ok((RETRY_OFFSETS_SECONDS[1] as number) <= 10);
  const last = RETRY_OFFSETS_SECONDS.at(-1) as number;
  assert.ok(last >= 3 * 3600 && last <= 5 * 3600, `${last}`);
  for (let i = 1; i < RETRY_OFFSETS_SECONDS.length; i++)
    assert.ok((RETRY_OFFSETS_SECONDS[i] as number) > (RETRY_OFFSETS_SECONDS[i - 1] as number));
  const first = new Date('2026-01-01T00:00:00Z');
  // Every retryable failure schedules the next attempt within its offset's window (up to JITTER_SHARE
  // of the wait before it earlier, never later), after the one before; the last attempt is final.
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 50 }), (id, start) => {
      let previous = first.getTime();
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const series = attempt + start - 1;
        const step = nextStep({ status: 503, error: null }, series, first, id, start);
        if (attempt === MAX_ATTEMPTS) return step.outcome === 'failed' && step.nextAt === null;
        const again = nextStep({ status: 503, error: null }, series, first, id, start);
        const at = step.nextAt?.getTime() ?? Number.NaN;
        const latest = first.getTime() + (RETRY_OFFSETS_SECONDS[attempt] as number) * 1000;
        const gap =
          ((RETRY_OFFSETS_SECONDS[attempt] as number) - (RETRY_OFFSETS_SECONDS[attempt - 1] as number)) *
          1000;
        if (step.outcome !== 'retry' || again.nextAt?.getTime() !== at) return false;
        if (!(at <= latest && at > latest - JITTER_SHARE * gap - 1 && at > previous)) return false;
        if (
          attempt === MAX_ATTEMPTS - 1 &&
          !(at - first.getTime() >= 3 * 3600_000 && at <= first.getTime() + 5 * 3600_000)
        )
          return false;
        previous = at;
      }
      return false;
    }),
  );
  assert.equal(nextStep({ status: 400, error: null }, 1, first, 'whd_a'), {
    outcome: 'failed',
    nextAt: null,
  });
  assert.equal(nextStep({ status: 200, error: null }, 3, first, 'whd_a'), {
    outcome: 'succeeded',
    nextAt: null,
  });
});

t(
  'the published schedule (docs/WEBHOOKS.md), hand-worked: each retry within a fifth of its wait before its time',
  () => {
    // The times docs/WEBHOOKS.md publishes, written out here rather than read from RETRY_OFFSETS_SECONDS
    // (the property above holds for any increasing schedule ending between 3 and 5 hours).
    const published = [
      0,
      5,
      35,
      5 * 60 + 35,
      20 * 60 + 35,
      50 * 60 + 35,
      3600 + 50 * 60 + 35,
      2 * 3600 + 50 * 60 + 35,
      4 * 3600 + 5 * 60 + 35,
    ];
    assert.equal([...RETRY_OFFSETS_SECONDS], published);
    assert.is(MAX_ATTEMPTS, 9);
    const first = new Date('2026-01-01T00:00:00Z');
    // [earliest, latest] seconds after the first attempt for attempts 2 … 9: latest - (latest - previous) / 5.
    const windows: [number, number][] = [
      [4, 5],
      [29, 35],
      [275, 335],
      [1055, 1235],
      [2675, 3035],
      [5915, 6635],
      [9515, 10235],
      [13835, 14735],
    ];
    for (const id of ['whd_a', 'whd_b', 'whd_0123456789', 'whd_zz']) {
      windows.forEach(([earliest, latest], i) => {
        const attempt = i + 1;
        const at = (nextStep({ status: 503, error: null }, attempt, first, id).nextAt as Date).getTime();
        const s = (at - first.getTime()) / 1000;
        assert.ok(s >= earliest && s <= latest, `${id} attempt ${attempt + 1} at ${s} s`);
      });
      // After the 9th attempt, no 10th.
      assert.equal(nextStep({ status: 503, error: null }, 9, first, id), { outcome: 'failed', nextAt: null });
    }
    // A resend starts a series of its own: its attempt 12 (series start 10) is the series' 3rd.
    const resend = (nextStep({ status: 503, error: null }, 11, first, 'whd_a', 10).nextAt as Date).getTime();
    assert.ok(resend - first.getTime() >= 29_000 && resend - first.getTime() <= 35_000, `${resend}`);
  },
);

t('the retries of a burst of deliveries are spread, not all due at the same moments', () => {
  // 200 deliveries fanned out in the same instant to an endpoint that is down: without a spread, each
  // retry of all 200 came due at the same millisecond and met the endpoint together when it returned.
  const first = new Date('2026-01-01T00:00:00Z');
  const ids = Array.from({ length: 200 }, (_, i) => `whd_burst${String(i).padStart(4, '0')}`);
  for (let attempt = 2; attempt < MAX_ATTEMPTS; attempt++) {
    const due = ids.map((id) =>
      (nextStep({ status: 503, error: null }, attempt, first, id).nextAt as Date).getTime(),
    );
    const gap =
      ((RETRY_OFFSETS_SECONDS[attempt] as number) - (RETRY_OFFSETS_SECONDS[attempt - 1] as number)) * 1000;
    const window = JITTER_SHARE * gap;
    // Spread over most of the window, and no tenth of the window holds more than a fifth of them.
    assert.ok(Math.max(...due) - Math.min(...due) > 0.8 * window, `retry ${attempt + 1}: spread`);
    const perTenth = new Map<number, number>();
    for (const at of due) {
      const slot = Math.floor((at - Math.min(...due)) / (window / 10));
      perTenth.set(slot, (perTenth.get(slot) ?? 0) + 1);
    }
    assert.ok(Math.max(...perTenth.values()) <= ids.length / 5, `retry ${attempt + 1}: bunched`);
  }
});

t('addresses: only public unicast, IPv4-mapped IPv6 judged as IPv4', () => {
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    assert.ok(isPublicAddress(a), a);
  for (const a of [
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::7f00:1',
    // IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291): a host that still routes it (an
    // automatic tunnel) reaches the IPv4 address inside; ipaddr.js calls these 'unicast'.
    '::7f00:1',
    '::127.0.0.1',
    '::10.0.0.1',
    '::169.254.169.254',
    // Outside 2000::/3, the only IPv6 space allocated for global unicast: none is a public address.
    '4000::1',
    'e000::1',
    'not an address',
  ])
    assert.not.ok(isPublicAddress(a), a);
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 255 }),
      fc.integer({ min: 0, max: 255 }),
      fc.integer({ min: 0, max: 255 }),
      (b, c, d) =>
        [`10.${b}.${c}.${d}`, `127.${b}.${c}.${d}`, `192.168.${c}.${d}`, `::ffff:10.${b}.${c}.${d}`].every(
          (a) => !isPublicAddress(a),
        ),
    ),
  );
});

t('target URLs: https only, no literal private address, no localhost, no credentials', () => {
  const refused = [
    'http://example.com/hook',
    'ftp://example.com/hook',
    'https://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::127.0.0.1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[fd00::1]/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://localhost/hook',
    'https://api.localhost/hook',
    'https://intranet/hook',
    'https://user:pass@example.com/hook',
    'https://example.com/hook#frag',
    'not a url',
    `https://example.com/${'a'.repeat(2100)}`,
  ];
  for (const u of refused) assert.ok(targetUrlProblem(u, false), u);
  for (const u of [
    'https://example.com/hook',
    'https://8.8.8.8/x',
    'https://hooks.partner.example:8443/a?b=c',
  ])
    assert.is(targetUrlProblem(u, false), null, u);
  // WEBHOOK_ALLOW_PRIVATE_TARGETS=true: loopback and http are allowed (tests, local development).
  assert.is(targetUrlProblem('http://127.0.0.1:3001/hook', true), null);
  assert.ok(targetUrlProblem('ftp://127.0.0.1/hook', true));
});

const lookupWith = (addresses: string[], allowPrivate = false) =>
  new Promise<{ err: Error | null; address: string }>((resolve) => {
    const lookup = guardedLookup(allowPrivate, (_host, cb) =>
      cb(
        null,
        addresses.map((a) => ({ address: a, family: a.includes(':') ? 6 : 4 })),
      ),
    );
    lookup('hooks.partner.example', {}, (err, address) => resolve({ err, address: address as string }));
  });

t('the connect-time lookup refuses a name resolving to any non-public address (DNS rebinding)', async () => {
  for (const set of [
    ['127.0.0.1'],
    ['8.8.8.8', '10.0.0.1'],
    ['::1'],
    ['::ffff:127.0.0.1'],
    ['169.254.169.254'],
  ]) {
    const { err } = await lookupWith(set);
    assert.instance(err, BlockedTargetError, set.join());
  }
  const ok = await lookupWith(['8.8.8.8']);
  assert.is(ok.err, null);
  assert.is(ok.address, '8.8.8.8', 'the socket connects to exactly the address checked');
  assert.is((await lookupWith(['127.0.0.1'], true)).err, null);
});

/** One attempt of a test delivery to `url`; `more` gives what a test varies (private targets, a resolver…). */
const attemptAt = (url: string, more: Partial<AttemptRequest> = {}) =>
  sendAttempt({
    url,
    body: '{}',
    secrets: ['whsec_x'],
    timestamp: 1,
    attempt: 1,
    deliveryId: 'whd_x',
    logId: 'whl_x',
    eventTime: '2026-01-01T00:00:00.000Z',
    customHeaders: {},
    allowPrivate: false,
    ...more,
  });

t('an attempt to a name that resolves to loopback is refused before any byte is sent', async () => {
  const res = await attemptAt('https://hooks.partner.example/x', {
    resolver: (_h, cb) => cb(null, [{ address: '127.0.0.1', family: 4 }]),
  });
  assert.is(res.error, 'blocked_target');
  assert.is(res.status, null);
  const http = await attemptAt('http://8.8.8.8/x');
  assert.is(http.error, 'blocked_target', 'http is refused unless private targets are allowed');
});

t(
  'an attempt to a literal private address is refused before connecting (Node skips the lookup for it)',
  async () => {
    // A URL saved under other rules (private targets allowed then, an older version): no connection.
    let connections = 0;
    const server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]']) {
        const res = await attemptAt(`https://${host}:${port}/x`);
        assert.is(res.error, 'blocked_target', `${host}: ${res.error} ${res.message}`);
        assert.is(res.status, null);
      }
      assert.is(connections, 0, 'a connection reached the private address');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  },
);

/** A loopback receiver answering every request with `answer` (the test's own server: no lookup). */
async function receiver(answer: (res: import('node:http').ServerResponse) => void) {
  const { createServer: createHttpServer } = await import('node:http');
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const attempt = (timeoutMs?: number, signal?: AbortSignal) =>
    attemptAt(`http://127.0.0.1:${port}/hook`, {
      allowPrivate: true,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(signal === undefined ? {} : { signal }),
    });
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { attempt, close };
}

t(
  'an endpoint that answered 2xx in time and trickles its body past the timeout has answered (not retried as a timeout)',
  async () => {
    // The status line and a first chunk at once; the rest of the body never comes (until the test ends).
    const rx = await receiver((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('accepted, still talking');
    });
    try {
      const res = await rx.attempt(300);
      assert.is(res.status, 200, `${res.error} ${res.message}`);
      assert.is(res.error, null);
      assert.is(res.bodyExcerpt, 'accepted, still talking');
      assert.ok(res.excerptTruncated, 'the body was cut');
    } finally {
      await rx.close();
    }
  },
);

t(
  'a stop after the endpoint answered 2xx, its body still coming, keeps the answer (not handed back to be sent again)',
  async () => {
    const rx = await receiver((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('accepted, still talking');
    });
    const stop = new AbortController();
    // The service stops once the attempt has the endpoint's status line (Node publishes each client
    // response here before its 'response' event; the stop comes after that event's handlers ran).
    const onResponse = () => setImmediate(() => stop.abort());
    diagnostics.subscribe('http.client.response.finish', onResponse);
    try {
      const res = await rx.attempt(undefined, stop.signal);
      assert.is(res.stopped, undefined, res.message ?? '');
      assert.is(res.status, 200, `${res.error} ${res.message}`);
      assert.is(res.error, null);
      assert.ok(res.excerptTruncated, 'the body was cut');
    } finally {
      diagnostics.unsubscribe('http.client.response.finish', onResponse);
      await rx.close();
    }
  },
);

t(
  'an endpoint answering a body without end is read for its excerpt only, and its status decides',
  async () => {
    let written = 0;
    const rx = await receiver((res) => {
      res.writeHead(503, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(16 * 1024, 'y');
      const more = () => {
        while (!res.destroyed && res.write(chunk)) written += chunk.length;
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    try {
      // The bound only ends the test if the body were read to its end (it has none).
      const res = await rx.attempt(120_000);
      assert.is(res.status, 503, `${res.error} ${res.message}`);
      assert.is(res.error, null);
      assert.ok(res.excerptTruncated);
      assert.is(res.bodyExcerpt?.length, 512);
    } finally {
      await rx.close();
    }
    assert.ok(written < 64 * 1024 * 1024, `${written} bytes sent before the attempt let go`);
  },
);

t(
  'an echoed signing secret is redacted from the excerpt kept, however short (a bootstrap file may give whsec_x)',
  async () => {
    // The shortest secret a bootstrap file may give (src/webhooks-bootstrap.ts): whsec_ and one character.
    const secret = 'whsec_x';
    const e = responseExcerpt(`{"echo":"${secret}"}`, [secret]);
    assert.not.ok(e?.text.includes(secret), e?.text);
    assert.ok(e?.text.includes('[redacted]'));
  },
);

t("signatures verify with Stripe's library, one v1= per secret", () => {
  const stripe = new Stripe('sk_test_unused');
  const a = generateSigningSecret();
  const b = generateSigningSecret();
  assert.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
  const body = JSON.stringify({ id: 'evt_1', type: 'reservation.created' });
  const now = Math.floor(Date.now() / 1000);
  const header = signatureHeader([a, b], now, body);
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  assert.is(stripe.webhooks.constructEvent(body, header, a).id, 'evt_1');
  assert.is(stripe.webhooks.constructEvent(body, header, b).id, 'evt_1');
  assert.throws(() => stripe.webhooks.constructEvent(`${body} `, header, a));
  // Stripe's tolerance is real time: a signature made far from now is refused by it.
  assert.throws(() => stripe.webhooks.constructEvent(body, signatureHeader([a], now - 3600, body), a));
});

t('custom headers: reserved prefix, hop-by-hop, credentials and injection are refused', () => {
  const bad = [
    'X-Service-Foo',
    'x-SERVICE-attempt',
    'Connection',
    'keep-alive',
    'Authorization',
    'Proxy-Authorization',
    'Cookie',
    'Host',
    'Content-Length',
    'Transfer-Encoding',
    'Service-Signature',
    'Bad Name',
    '',
  ];
  for (const name of bad) assert.is(headerIssues({ [name]: 'v' }).length, 1, name);
  assert.is(headerIssues({ 'X-Ok': 'line\r\nX-Evil: 1' }).length, 1);
  assert.is(headerIssues({ 'X-Ok': 'a', 'x-ok': 'b' }).length, 1, 'names are case-insensitive');
  assert.equal(headerIssues({ 'X-Partner-Account': 'acct 42', 'X-Api-Version': '2' }), []);
});

t(
  'a delivery is sent only while the credential reads its body: type scope, and the sensitive scope for contact details',
  () => {
    const all = ['RESERVATIONS_READ', 'RESERVATIONS_READ_SENSITIVE', 'CUSTOMERS_READ'];
    assert.ok(scopesReadDelivery(all, 'reservation.updated', 'v1_sensitive'));
    assert.ok(scopesReadDelivery(all, 'RESERVATION_UPDATED', 'legacy_sensitive'));
    assert.ok(scopesReadDelivery(all, 'customer.created', 'v1'));
    assert.ok(scopesReadDelivery(['RESERVATIONS_READ'], 'reservation.created', 'v1'));
    assert.not.ok(scopesReadDelivery(['RESERVATIONS_READ'], 'reservation.created', 'v1_sensitive'));
    assert.not.ok(scopesReadDelivery(['RESERVATIONS_READ'], 'RESERVATION_UPDATED', 'legacy_sensitive'));
    assert.not.ok(scopesReadDelivery(['CUSTOMERS_READ'], 'reservation.canceled', 'v1'));
    assert.not.ok(scopesReadDelivery(['CUSTOMERS_READ'], 'RESERVATION_UPDATED', 'legacy'));
    assert.not.ok(scopesReadDelivery(['RESERVATIONS_READ'], 'customer.updated', 'v1'));
  },
);

t('one scope rule: what an endpoint may subscribe to, what is sent and what may be retried agree', () => {
  const SCOPES = ['RESERVATIONS_READ', 'RESERVATIONS_READ_SENSITIVE', 'CUSTOMERS_READ', 'CATALOG_READ'];
  fc.assert(
    fc.property(fc.subarray(SCOPES), (scopes) => {
      const readable = new Set<string>(readableTypes(scopes));
      for (const type of [...V1_EVENT_TYPES, 'RESERVATION_UPDATED']) {
        const needs = readScopeOf(type);
        const reads = needs !== null && scopes.includes(needs);
        if (scopesReadDelivery(scopes, type, 'v1') !== reads) return false;
        if (type === 'RESERVATION_UPDATED') continue;
        if (readable.has(type) !== reads) return false;
        let refusal: string | null = null;
        try {
          checkSettings(
            { url: 'https://hooks.partner.test/x', enabled_events: [type] },
            { allowPrivate: false, scopes },
          );
        } catch (err) {
          refusal = ((err as ApiError).details?.issues as Issue[] | undefined)?.[0]?.message ?? 'refused';
        }
        if (reads !== (refusal === null)) return false;
        if (refusal !== null && refusal !== `${type} needs ${needs}, which this credential does not hold`)
          return false;
      }
      return true;
    }),
  );
  assert.is(readScopeOf('reservation.canceled'), 'RESERVATIONS_READ');
  assert.is(readScopeOf('RESERVATION_UPDATED'), 'RESERVATIONS_READ');
  assert.is(readScopeOf('customer.merged'), 'CUSTOMERS_READ');
  assert.is(readScopeOf('webhook_endpoint.test'), null);
});

t('event types follow the read scopes', () => {
  assert.equal(readableTypes(['RESERVATIONS_READ']), [
    'reservation.created',
    'reservation.updated',
    'reservation.canceled',
  ]);
  assert.equal(readableTypes(['CUSTOMERS_READ']), [
    'customer.created',
    'customer.updated',
    'customer.deleted',
    'customer.merged',
  ]);
  assert.equal(readableTypes(['WEBHOOKS_WRITE']), []);
  assert.throws(() =>
    checkSettings(
      { enabled_events: ['customer.updated'] },
      { allowPrivate: false, scopes: ['RESERVATIONS_READ'] },
    ),
  );
  assert.throws(() =>
    checkSettings(
      { enabled_events: ['*', 'reservation.created'] },
      { allowPrivate: false, scopes: ['RESERVATIONS_READ'] },
    ),
  );
  assert.throws(() =>
    checkSettings(
      { enabled_events: ['reservation.created', 'reservation.created'] },
      { allowPrivate: false, scopes: ['RESERVATIONS_READ'] },
    ),
  );
  checkSettings({ enabled_events: ['*'] }, { allowPrivate: false, scopes: ['RESERVATIONS_READ'] });
});

t(
  'a target URL is saved as it is sent: spaces and control characters the URL parser drops are refused',
  () => {
    // new URL() drops tabs and line breaks anywhere, and spaces and controls at either end: the endpoint
    // would show one URL ("https://good.example\t.attacker.example/") and be sent to another.
    for (const url of [
      'https://exa\tmple.com/hook',
      'https://example.com/ho\nok',
      'https://example.com/hook\r',
      ' https://example.com/hook',
      'https://example.com/hook ',
      '\u0000https://example.com/hook',
      'https://example.com/a b',
      'https://example.com/\u007f',
    ]) {
      const err = (() => {
        try {
          checkSettings({ url }, { allowPrivate: false, scopes: ['RESERVATIONS_READ'] });
        } catch (e) {
          return e as ApiError;
        }
        return null;
      })();
      assert.ok(err, JSON.stringify(url));
      assert.equal(
        ((err?.details?.issues ?? []) as Issue[]).map((i) => [i.path, i.code]),
        [['url', 'invalid_format']],
        JSON.stringify(url),
      );
    }
    checkSettings({ url: 'https://example.com/hook?a=%20b' }, { allowPrivate: false, scopes: [] });
  },
);

t('sealed secrets: round trip, a fresh IV each time, tampering and another key refused', () => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('whsec_abc');
  assert.is(box.open(sealed), 'whsec_abc');
  assert.is.not(box.seal('whsec_abc'), sealed);
  assert.not.ok(sealed.includes('whsec_abc'));
  const parts = sealed.split('.');
  const flipped = [...parts.slice(0, 3), `${parts[3]?.slice(0, -2)}AA`].join('.');
  assert.throws(() => box.open(flipped));
  assert.throws(() => new SecretBox(randomBytes(32)).open(sealed));
  assert.ok(parseSecretsKey('ab'.repeat(32)));
  assert.ok(parseSecretsKey(randomBytes(32).toString('base64')));
  assert.is(parseSecretsKey('short'), null);
  assert.is(parseSecretsKey(randomBytes(16).toString('hex')), null);
});

t('previous_attributes: the changed fields with their values before', () => {
  assert.equal(previousAttributes({ a: 1, b: [1], c: 'x' }, { a: 1, b: [1, 2], c: 'y' }), { b: [1], c: 'x' });
  assert.equal(previousAttributes({ a: null }, { a: 1, d: 2 }), { a: null, d: null });
  assert.equal(previousAttributes({ a: { x: 1 } }, { a: { x: 1 } }), {});
});

t("a rotation's previous secret signs until its grace period ends, not at that instant", () => {
  const e = (expires_at: string | null) => ({ previous_secret: expires_at === null ? null : { expires_at } });
  const now = new Date('2026-06-02T10:00:00.000Z');
  assert.is(previousSecretSigns(e(null), now), false);
  assert.is(previousSecretSigns(e('2026-06-02T10:00:00.001Z'), now), true);
  assert.is(previousSecretSigns(e('2026-06-02T10:00:00.000Z'), now), false);
  assert.is(previousSecretSigns(e('2026-06-01T10:00:00.000Z'), now), false);
});

t('a retry or a resend goes only where the endpoint, as set now, would receive its event', () => {
  const v1 = { disabled: false, api_version: 'v1' as const, enabled_events: ['customer.created'] };
  assert.is(refusedBySettings(v1, 'customer.created'), null);
  assert.is(refusedBySettings(v1, 'customer.updated'), 'event_type_disabled');
  assert.is(refusedBySettings({ ...v1, enabled_events: ['*'] }, 'reservation.updated'), null);
  assert.is(refusedBySettings({ ...v1, disabled: true }, 'customer.created'), 'endpoint_disabled');
  // A legacy body made before the endpoint's migration: it receives the v1 format only since.
  assert.is(refusedBySettings(v1, 'RESERVATION_UPDATED'), 'endpoint_migrated');
  // A legacy endpoint takes its RESERVATION_UPDATED whatever its enabled_events (never filtered by them).
  const legacy = { disabled: false, api_version: 'legacy' as const, enabled_events: ['customer.created'] };
  assert.is(refusedBySettings(legacy, 'RESERVATION_UPDATED'), null);
  assert.is(refusedBySettings({ ...legacy, disabled: true }, 'RESERVATION_UPDATED'), 'endpoint_disabled');
});

t('two rotations within the grace: the secret receivers hold keeps signing until its own expiry', () => {
  // Two rotate-secret calls at once, or a retry whose first answer was lost: the second replaced the
  // only old secret kept, so the one every receiver still held (s0) stopped signing at once.
  let revision = 0;
  const fold = (state: EndpointState, type: string, data: Record<string, unknown>) =>
    evolveEndpoint(state, {
      id: `e${revision}`,
      type,
      data,
      metadata: {},
      created: '',
      stream: 'we',
      revision: revision++,
      position: 0n,
    });
  let s = fold(initialEndpoint, 'WebhookEndpointCreated', {
    endpoint_id: 'we_1',
    restaurant_id: 'r',
    credential_id: 'k',
    api_version: 'v1',
    url: 'https://h.example/',
    enabled_events: ['*'],
    headers: {},
    disabled: false,
    secret: 's0',
    at: '2026-06-01T00:00:00.000Z',
  });
  const rotate = (state: EndpointState, secret: string, at: string, grace = 86_400) => {
    const [e] = decideRotateSecret(state, 'r', 'we_1', secret, grace, new Date(at));
    return fold(state, e?.type as string, e?.data as Record<string, unknown>);
  };
  const signing = (state: EndpointState, at: string) =>
    oldSecretsSigning(state.endpoint as NonNullable<EndpointState['endpoint']>, new Date(at));
  s = rotate(s, 's1', '2026-06-01T10:00:00.000Z');
  s = rotate(s, 's2', '2026-06-01T10:00:01.000Z');
  assert.equal(signing(s, '2026-06-01T10:00:02.000Z'), ['s1', 's0']);
  // Each until its own expiry: s0 24 h after the first rotation, s1 24 h after the second.
  assert.equal(signing(s, '2026-06-02T10:00:00.500Z'), ['s1']);
  assert.equal(signing(s, '2026-06-02T10:00:01.000Z'), []);
  // A rotation with no grace (a leaked secret) stops every old one.
  assert.equal(signing(rotate(s, 's3', '2026-06-01T11:00:00.000Z', 0), '2026-06-01T11:00:00.000Z'), []);
  // A shorter grace shortens the earlier ones too, and at most MAX_EARLIER_SECRETS stay beside the last.
  const short = rotate(s, 's3', '2026-06-01T11:00:00.000Z', 60);
  assert.equal(signing(short, '2026-06-01T11:00:59.000Z'), ['s2', 's1', 's0']);
  assert.equal(signing(short, '2026-06-01T11:01:00.000Z'), []);
  let many = s;
  for (let i = 3; i < 12; i++) many = rotate(many, `s${i}`, `2026-06-01T12:00:0${i - 3}.000Z`);
  assert.is(signing(many, '2026-06-01T12:00:10.000Z').length, 1 + MAX_EARLIER_SECRETS);
  assert.equal(signing(many, '2026-06-01T12:00:10.000Z')[0], 's10');
});

t.run();
