// The endpoint page's ?before= (src/web/delivery-cursor.ts): every cursor the page writes reads back as
// itself; a value it never writes reads as none (the page then says the link is damaged, 400).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { deliveryCursor, readDeliveryCursor } from '../../src/web/delivery-cursor';

test('property: a cursor the page writes reads back as the delivery it names', () => {
  fc.assert(
    fc.property(
      fc.date({
        min: new Date('2000-01-01T00:00:00Z'),
        max: new Date('2999-12-31T23:59:59Z'),
        noInvalidDate: true,
      }),
      fc.stringMatching(/^[a-z0-9]{1,24}$/),
      (at, tail) => {
        const d = { created_at: at.toISOString(), _id: `whd_${tail}` };
        assert.equal(readDeliveryCursor(deliveryCursor(d)), { created_at: d.created_at, id: d._id });
      },
    ),
  );
});

test("the demo seeder's delivery ids read back too (a fresh start's endpoint page pages them)", () => {
  // src/insights-demo.ts: whd_demo_<restaurant>_<date>_<fan-out>_<endpoint>.
  for (const id of ['whd_demo_rest_demo_2026-11-01_0_1', 'whd_demo_rest_Chez-X.2_2026-11-01_12_0']) {
    const d = { created_at: '2026-11-01T10:42:17.301Z', _id: id };
    assert.equal(readDeliveryCursor(deliveryCursor(d)), { created_at: d.created_at, id });
  }
});

test('values the page never writes read as none', () => {
  for (const v of [
    '',
    'garbage',
    '|whd_1',
    '2026-06-02T10:00:00.000Z|',
    '2026-06-02T10:00:00.000Z',
    '2026-06-02|whd_1',
    'yesterday|whd_1',
    '2026-13-45T10:00:00.000Z|whd_1',
    '2026-06-02T10:00:00.000Z|evt_1',
    '2026-06-02T10:00:00.000Z|whd_1|x',
    '2026-06-02T10:00:00.000+02:00|whd_1',
  ])
    assert.is(readDeliveryCursor(v), null, v);
});

test.run();
