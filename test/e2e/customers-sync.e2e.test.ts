// GET /customers over HTTP: page size bounds, the order, the filters, updated_since, and cursors that
// are tampered with, forged, or belong to another restaurant (400).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startCustomerService, TOKENS } from '../helpers/customer-service';
import { OpenApiChecker } from '../helpers/openapi';
import type { TestService } from '../helpers/service';

const LIST = '/api/partner/v1/customers';
const t = suite<{ svc: TestService; openapi: OpenApiChecker; ids: string[] }>('customers: sync feed');

t.before(async (ctx) => {
  ctx.svc = await startCustomerService({ TEST_CLOCK: 'true' });
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
  ctx.ids = [];
  for (let i = 0; i < 120; i++) {
    const res = await ctx.svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: {
        name: `Sync ${i}`,
        email: `sync${i}@example.com`,
        phone_number: `+33 6 10 00 ${String(i)
          .padStart(4, '0')
          .replace(/(\d\d)(\d\d)/, '$1 $2')}`,
        external_id: `crm-${i}`,
        tags: i % 3 === 0 ? ['vip'] : [],
      },
    });
    assert.is(res.status, 201, res.text);
    ctx.ids.push(res.body.data.id);
  }
  // Customers of another restaurant never show.
  for (const name of ['Elsewhere', 'Elsewhere too'])
    await ctx.svc.api('POST', '/customers', { token: TOKENS.other, body: { name, tags: ['vip'] } });
});
t.after(async ({ svc }) => svc.close());

const list = (svc: TestService, query: string, token: string = TOKENS.read) =>
  svc.api('GET', `/customers${query}`, { token });

async function pass(svc: TestService, query: string) {
  const ids: string[] = [];
  let next = query;
  for (;;) {
    const res = await list(svc, next);
    assert.is(res.status, 200, res.text);
    ids.push(...res.body.data.map((c: { id: string }) => c.id));
    if (!res.body.pagination.has_more) return ids;
    next = `?cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`;
  }
}

t('limit: default 50, 1 and 100 accepted, 0 and 101 refused', async ({ svc, openapi }) => {
  const page = await list(svc, '');
  assert.is(page.status, 200);
  openapi.check('GET', LIST, page);
  assert.is(page.body.data.length, 50);
  assert.is(page.body.pagination.has_more, true);
  assert.is(typeof page.body.pagination.next_cursor, 'string');
  assert.is((await list(svc, '?limit=1')).body.data.length, 1);
  assert.is((await list(svc, '?limit=100')).body.data.length, 100);
  for (const bad of ['0', '101', 'ten', '-1']) {
    const res = await list(svc, `?limit=${bad}`);
    assert.is(res.status, 400, bad);
    openapi.check('GET', LIST, res);
  }
});

t(
  'a full pass returns everyone once, ordered by updated_at then id, and ends with a null cursor',
  async ({ svc, ids }) => {
    const all = await pass(svc, '?limit=7');
    assert.equal(all, ids);
    const last = await list(svc, '?limit=100&updated_since=2000-01-01T00:00:00Z');
    assert.is(last.body.pagination.has_more, true);
    const end = await list(svc, `?cursor=${encodeURIComponent(last.body.pagination.next_cursor)}`);
    assert.is(end.body.pagination.has_more, false);
    assert.is(end.body.pagination.next_cursor, null);
    const stamps: string[] = [...last.body.data, ...end.body.data].map(
      (c: { updated_at: string; id: string }) => `${c.updated_at} ${c.id}`,
    );
    // ISO instants of one format sort as strings; the space sorts before any id character.
    const sorted = [...stamps].sort();
    assert.equal(stamps, sorted);
  },
);

t('a customer updated during a pass comes again at the end', async ({ svc, ids }) => {
  const first = await list(svc, '?limit=10');
  const touched = ids[2] as string;
  await svc.api('PATCH', `/customers/${touched}`, {
    token: TOKENS.write,
    body: { note: 'changed mid-pass' },
  });
  const rest = await pass(svc, `?limit=10&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`);
  assert.is(rest.at(-1), touched);
  assert.ok(first.body.data.some((c: { id: string }) => c.id === touched));
});

t('filters: email in any case, phone in any spelling, external_id, tag', async ({ svc, ids }) => {
  const one = async (q: string) => (await list(svc, q)).body.data.map((c: { id: string }) => c.id);
  assert.equal(await one('?email=SYNC7@Example.com'), [ids[7]]);
  assert.equal(await one(`?phone=${encodeURIComponent('06 10 00 00 07')}`), [ids[7]]);
  assert.equal(await one(`?phone=${encodeURIComponent('+33610000007')}`), [ids[7]]);
  assert.equal(await one(`?phone=${encodeURIComponent('0033 6 10 00 00 07')}`), [ids[7]]);
  assert.equal(await one('?external_id=crm-7'), [ids[7]]);
  assert.equal(await one('?external_id=crm-7&email=other@example.com'), []);
  // An internationalised domain is stored in its ASCII form; the partner's CRM may hold the Unicode one.
  const idn = await svc.api('POST', '/customers', {
    token: TOKENS.write,
    body: { name: 'Idn', email: 'Jean@XN--exmple-cua.fr', on_match: 'create_new' },
  });
  assert.is(idn.status, 201, idn.text);
  for (const spelling of [
    'jean@exämple.fr',
    'JEAN@EXÄMPLE.FR',
    'jean@exa\u0308mple.fr',
    'jean@xn--exmple-cua.fr',
  ])
    assert.equal(await one(`?email=${encodeURIComponent(spelling)}`), [idn.body.data.id], spelling);
  assert.equal(await one(`?email=${encodeURIComponent('jean@example.fr')}`), []);
  const vip = await pass(svc, '?tag=vip&limit=6');
  assert.equal(
    vip,
    ids.filter((_, i) => i % 3 === 0),
  );
});

t(
  'an email filter with white space (a + sent unencoded) is 400 in words, not an empty page or another address',
  async ({ svc, openapi }) => {
    const plus = await svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: { name: 'Plus', email: 'jean+resto@example.com', on_match: 'create_new' },
    });
    assert.is(plus.status, 201, plus.text);
    const found = await list(svc, `?email=${encodeURIComponent('jean+resto@example.com')}`);
    assert.equal(
      found.body.data.map((c: { id: string }) => c.id),
      [plus.body.data.id],
    );
    // `jean+resto@…` unencoded arrives as `jean resto@…`; `+resto@…` as ` resto@…`, which, trimmed, was
    // read as another address.
    for (const query of [
      '?email=jean+resto@example.com',
      '?email=+sync7@example.com',
      '?email=sync7@example.com%20',
    ]) {
      const res = await list(svc, query);
      openapi.check('GET', LIST, res);
      assert.is(res.status, 400, query);
      const [issue] = res.body.error.details.issues;
      assert.is(issue.path, 'email');
      assert.is(issue.code, 'invalid_format');
      assert.match(issue.message, 'must be URL-encoded as %2B');
    }
  },
);

t(
  'a phone filter starting with a space (its + sent unencoded) is 400 in words, not an empty page',
  async ({ svc, openapi }) => {
    const uk = await svc.api('POST', '/customers', {
      token: TOKENS.write,
      body: { name: 'Uk', phone_number: '+44 7700 900123', on_match: 'create_new' },
    });
    assert.is(uk.status, 201, uk.text);
    for (const query of [`?phone=${encodeURIComponent('+447700900123')}`, '?phone=%2B44%207700%20900123'])
      assert.equal(
        (await list(svc, query)).body.data.map((c: { id: string }) => c.id),
        [uk.body.data.id],
        query,
      );
    // `+447700900123` unencoded arrives as ` 447700900123`, a French national number nobody has.
    for (const query of ['?phone=+447700900123', '?phone=+33610000007']) {
      const res = await list(svc, query);
      openapi.check('GET', LIST, res);
      assert.is(res.status, 400, query);
      const [issue] = res.body.error.details.issues;
      assert.is(issue.path, 'phone');
      assert.is(issue.code, 'invalid_format');
      assert.match(issue.message, 'must be URL-encoded as %2B');
    }
  },
);

t('updated_since is inclusive', async ({ svc }) => {
  const page = (await list(svc, '?limit=100')).body.data;
  const pivot = page[40];
  const since = await pass(svc, `?updated_since=${encodeURIComponent(pivot.updated_at)}&limit=13`);
  assert.is(since[0], pivot.id);
  const withOffset = new Date(pivot.updated_at);
  const local = `${new Date(withOffset.getTime() + 2 * 3600_000).toISOString().slice(0, 23)}+02:00`;
  assert.is(
    (await list(svc, `?limit=1&updated_since=${encodeURIComponent(local)}`)).body.data[0].id,
    pivot.id,
  );
  assert.is((await list(svc, '?updated_since=yesterday')).status, 400);
});

t(
  'updated_since at the ends of the calendar: past every change none, before every change all',
  async ({ svc, ids }) => {
    // Year 9999 with a negative offset is an instant of year 10000: nothing changed then, whatever the
    // text of its UTC form ("+010000-…") would compare as.
    for (const late of ['9999-12-31T23:59:59-14:00', '9999-12-31T23:59:59Z']) {
      const page = await list(svc, `?limit=5&updated_since=${encodeURIComponent(late)}`);
      assert.is(page.status, 200, page.text);
      assert.equal(page.body, { data: [], pagination: { next_cursor: null, has_more: false } }, late);
    }
    // Year 0000 with a positive offset is an instant of year -1: every change is after it.
    const early = await pass(
      svc,
      `?limit=100&updated_since=${encodeURIComponent('0000-01-01T00:00:00+14:00')}`,
    );
    assert.equal(early, await pass(svc, '?limit=100'));
    assert.ok(ids.every((id) => early.includes(id)));
  },
);

t('a tampered, forged, truncated or foreign cursor is a 400', async ({ svc, openapi }) => {
  const cursor = (await list(svc, '?limit=5')).body.pagination.next_cursor as string;
  const [body, mac] = cursor.split('.') as [string, string];
  const decoded = JSON.parse(Buffer.from(body, 'base64url').toString());
  const moved = Buffer.from(JSON.stringify({ ...decoded, a: 0 })).toString('base64url');
  const foreign = (await list(svc, '?limit=1', TOKENS.other)).body.pagination.next_cursor as string;
  assert.ok(foreign);
  for (const bad of [`${moved}.${mac}`, body, `${body}.`, `${body}.${mac.slice(1)}`, 'x.y', foreign]) {
    const res = await list(svc, `?cursor=${encodeURIComponent(bad)}`);
    assert.is(res.status, 400, bad);
    openapi.check('GET', LIST, res);
    assert.is(res.body.error.details.issues[0].path, 'cursor');
  }
  // The foreign restaurant cannot use ours either.
  assert.is((await list(svc, `?cursor=${encodeURIComponent(cursor)}`, TOKENS.other)).status, 400);
  // A cursor with other filters than its own pass is refused too.
  assert.is((await list(svc, `?tag=vip&cursor=${encodeURIComponent(cursor)}`)).status, 400);
});

t.run();
