// Sync feed cursors: they round-trip, and any change to them, or a key of another restaurant, is a 400.
import { createHmac, randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCursor, encodeCursor, type FeedFilters } from '../../queries/customer-cursor';
import { filtersOfPass, openCursor, signCursor } from '../../queries/signed-cursor';
import { ApiError } from '../../src/core/errors';

const t = suite('customer cursor');
const key = randomBytes(32);
const payload = {
  restaurant_id: 'rest_a',
  after: 1234,
  filters: { tag: 'vip', updated_since: '2026-01-01T00:00:00.000Z' },
};

function code(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    assert.is(err.status, 400);
    return ((err.details?.issues ?? []) as { code: string }[])[0]?.code ?? null;
  }
}

t('a cursor round-trips', () => {
  assert.equal(decodeCursor(key, encodeCursor(key, payload), 'rest_a'), payload);
});

t('an altered body, signature or shape, another key or another restaurant is refused', () => {
  const c = encodeCursor(key, payload);
  const [body, mac] = c.split('.') as [string, string];
  const forged = Buffer.from(JSON.stringify({ v: 1, r: 'rest_a', a: 0, f: {} })).toString('base64url');
  const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
  for (const bad of [
    `${forged}.${mac}`,
    `${body}.${flip(mac)}`,
    `${flip(body)}.${mac}`,
    body,
    `${c}.x`,
    '',
    'garbage',
    encodeCursor(randomBytes(32), payload),
  ])
    assert.is(
      code(() => decodeCursor(key, bad, 'rest_a')),
      'invalid_cursor',
      bad,
    );
  assert.is(
    code(() => decodeCursor(key, c, 'rest_b')),
    'invalid_cursor',
  );
  // A signed payload of the wrong shape is refused as well (a key leak must not crash the feed).
  const weird = Buffer.from(JSON.stringify({ v: 1, r: 'rest_a', a: -1, f: {} })).toString('base64url');
  const signed = `${weird}.${createHmac('sha256', key).update(weird).digest('base64url')}`;
  assert.is(
    code(() => decodeCursor(key, signed, 'rest_a')),
    'invalid_cursor',
  );
});

t("a cursor signed under one listing's label does not open under another's", () => {
  const c = signCursor(key, '', { v: 2, k: 'x' });
  assert.equal(openCursor(key, '', c), { v: 2, k: 'x' });
  assert.is(openCursor(key, 'missed-calls:', c), null);
  assert.is(openCursor(key, '', signCursor(key, 'missed-calls:', { v: 2, k: 'x' })), null);
});

t(
  'a next page runs with the filters its cursor carries; other filters given with it are cursor_mismatch',
  () => {
    const carried: FeedFilters = { tag: 'vip', email: 'a@x.co' };
    assert.equal(filtersOfPass({}, carried), carried);
    assert.equal(filtersOfPass({ email: 'a@x.co', tag: 'vip' }, carried), carried);
    assert.is(
      code(() => filtersOfPass({ tag: 'regular', email: 'a@x.co' }, carried)),
      'cursor_mismatch',
    );
    assert.is(
      code(() => filtersOfPass({ tag: 'vip' }, carried)),
      'cursor_mismatch',
    );
    assert.is(
      code(() => filtersOfPass({ tag: 'vip', email: 'a@x.co', phone: '33612345678' }, carried)),
      'cursor_mismatch',
    );
  },
);

t.run();
