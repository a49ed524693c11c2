// Without a bootstrap file the demo restaurant comes with a real catalog: a newcomer's first calls
// answer something.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FixedClock } from '../../src/core/clock';
import { publishedDocument } from '../helpers/openapi';
import { startTestService, type TestService } from '../helpers/service';

const t = suite<{ svc: TestService; token: string }>('demo catalog');

t.before(async (ctx) => {
  ctx.svc = await startTestService({ demo: true, clock: new FixedClock('2026-05-01T08:00:00Z') });
  ctx.token = ctx.svc.demo?.token as string;
});
t.after(async (ctx) => {
  await ctx.svc.close();
});

t('two rooms, ten tables of 2, 4 and 6, lunch and dinner every day', async ({ svc, token }) => {
  const rooms = await svc.api('GET', '/rooms', { token });
  assert.is(rooms.body.data.length, 2);
  const tables = (await svc.api('GET', '/tables', { token })).body.data as { max_pax: number }[];
  assert.is(tables.length, 10);
  assert.equal([...new Set(tables.map((x) => x.max_pax))].sort(), [2, 4, 6]);
  const shifts = (await svc.api('GET', '/shifts', { token })).body.data as {
    id: string;
    days_of_week: number[];
  }[];
  assert.equal(
    shifts.map((s) => [s.id, s.days_of_week]),
    [
      ['shift_lunch', [1, 2, 3, 4, 5, 6, 7]],
      ['shift_dinner', [1, 2, 3, 4, 5, 6, 7]],
    ],
  );
  for (const path of ['/prescribers', '/discounts', '/customer-fields', '/message-templates'])
    assert.ok((await svc.api('GET', path, { token })).body.data.length > 0, path);
});

t('the demo restaurant offers dinner slots tomorrow', async ({ svc, token }) => {
  const q = `start_at_from=${encodeURIComponent('2026-05-02T18:00:00+02:00')}&start_at_to=${encodeURIComponent('2026-05-02T23:00:00+02:00')}&party_size=2`;
  const res = await svc.api('GET', `/availability?${q}`, { token });
  assert.is(res.status, 200);
  assert.is(res.body.data.slots.length, 13);
  assert.is(res.body.data.slots[0].duration_minutes, 90);
});

t('every documented query default is what the server does without the parameter', async ({ svc, token }) => {
  const doc = (await publishedDocument(svc.rt)) as unknown as {
    paths: Record<
      string,
      Record<string, { parameters?: { name: string; in: string; schema: { default?: unknown } }[] }>
    >;
  };
  const endpoint = (
    await svc.api('POST', '/webhook-endpoints', { token, body: { url: 'https://hooks.example.test/x' } })
  ).body.data.id as string;
  let compared = 0;
  let filled = 0;
  for (const [template, ops] of Object.entries(doc.paths)) {
    const params =
      ops.get?.parameters?.filter((p) => p.in === 'query' && p.schema.default !== undefined) ?? [];
    const path = template.replace('/api/partner/v1', '').replace('{id}', endpoint);
    for (const p of params) {
      const without = await svc.api('GET', path, { token });
      const stated = await svc.api('GET', `${path}?${p.name}=${p.schema.default}`, { token });
      assert.is(without.status, 200, `${template}: ${without.text}`);
      assert.equal(without.body, stated.body, `${template} ${p.name}: its default is ${p.schema.default}`);
      compared++;
      // A page-size default is seen at work where the demo has more than a page.
      if (p.name !== 'page' && without.body.data.length === p.schema.default) filled++;
    }
  }
  assert.ok(compared >= 7, `${compared} defaults compared`);
  assert.ok(filled >= 2, `${filled} page sizes filled`);
});

t.run();
