// The one rule for free text a partner sends (docs/RESERVATIONS.md, "Free text"): a field the API says
// holds something (min length 1: identifiers, tags, a cancellation reason) refuses a value with no
// visible character; a text that may be cleared (note, custom_message, allergies, a webhook
// endpoint's description) stores such a value as null. Tags keep one of each, in order, on customers
// and reservations alike, and so do a reservation's attached_files.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { OpenApiChecker } from '../helpers/openapi';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>('free text: blank values and tags');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
  ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
});
t.after(async ({ svc }) => svc.close());

const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;
/** Only whitespace, a zero-width space, a no-break space, a control character: nothing that shows. */
const BLANKS = [' ', '\t\n', '\u200b', '\u00a0', '\u0000'];

t('reservation tags keep one of each, in the order first given, on POST and PATCH', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('10', '19:00'), tags: ['vip', 'late', 'vip', 'late', 'a'] }))
    .body.data;
  assert.equal(r.tags, ['vip', 'late', 'a']);
  const res = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { tags: ['b', 'b', 'vip'] },
  });
  assert.is(res.status, 200);
  assert.equal(res.body.data.tags, ['b', 'vip']);
  // The same list with repeats is no change.
  const same = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { tags: ['b', 'vip', 'vip'] },
  });
  assert.is(same.status, 200);
  assert.is(same.body.data.updated_at, res.body.data.updated_at);
});

t(
  'reservation attached_files keep one of each, in the order first given, on POST and PATCH',
  async ({ svc }) => {
    const a = 'https://files.example.test/menu.pdf';
    const b = 'https://files.example.test/seating-plan.png';
    const r = (await create(svc, { start_at: at('10', '21:00'), attached_files: [a, b, a, b] })).body.data;
    assert.equal(r.attached_files, [a, b]);
    const res = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { attached_files: [b, b, a] },
    });
    assert.is(res.status, 200);
    assert.equal(res.body.data.attached_files, [b, a]);
    // The same list with repeats is no change: nothing written, updated_at kept.
    const same = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { attached_files: [b, a, a] },
    });
    assert.is(same.status, 200);
    assert.is(same.body.data.updated_at, res.body.data.updated_at);
    // Repeats differing only in case are two files (a URL's path is case-sensitive).
    const cased = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { attached_files: [a, a.toUpperCase()] },
    });
    assert.equal(cased.body.data.attached_files, [a, a.toUpperCase()]);
  },
);

t(
  'a blank cancellation reason is refused (400 not_blank), the reservation left as it was',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('10', '20:00') })).body.data;
    for (const reason of BLANKS) {
      const res = await svc.api('POST', `/reservations/${r.id}/cancel`, {
        token: TOKENS.full,
        body: { reason },
        invalid: true,
      });
      assert.is(res.status, 400, JSON.stringify(reason));
      assert.is(res.body.error.code, 'VALIDATION_ERROR');
      assert.is(res.body.error.details.issues[0].path, 'reason');
    }
    const now = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
    assert.is(now.body.data.status, 'CONFIRMED');
    const ok = await svc.api('POST', `/reservations/${r.id}/cancel`, {
      token: TOKENS.full,
      body: { reason: ' x ' },
    });
    assert.is(ok.body.data.cancellation_reason, ' x ');
  },
);

t('reservation identifiers and list items refuse a blank value (400), on POST and PATCH', async ({ svc }) => {
  for (const blank of BLANKS)
    for (const body of [{ external_id: blank }, { tags: ['ok', blank] }, { attached_files: [blank] }]) {
      const res = await create(svc, { start_at: at('11', '19:00'), ...body }, TOKENS.full, undefined, true);
      assert.is(res.status, 400, JSON.stringify(body));
      assert.is(res.body.error.code, 'VALIDATION_ERROR');
    }
  const r = (await create(svc, { start_at: at('11', '19:00'), external_id: 'ext-1' })).body.data;
  for (const body of [{ external_id: ' ' }, { tags: ['\u200b'] }]) {
    const res = await svc.api('PATCH', `/reservations/${r.id}`, { token: TOKENS.full, body, invalid: true });
    assert.is(res.status, 400, JSON.stringify(body));
  }
  const after = await svc.api('GET', `/reservations/${r.id}`, { token: TOKENS.full });
  assert.is(after.body.data.external_id, 'ext-1');
});

t('a blank custom_message or allergies is stored as null, as null clears it', async ({ svc, openapi }) => {
  const r = (await create(svc, { start_at: at('12', '19:00'), custom_message: ' ', allergies: '\u200b\n' }))
    .body.data;
  assert.is(r.custom_message, null);
  assert.is(r.allergies, null);
  const set = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { custom_message: 'window seat', allergies: 'nuts' },
  });
  assert.is(set.body.data.custom_message, 'window seat');
  const cleared = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { custom_message: '', allergies: '\t' },
  });
  assert.is(cleared.status, 200);
  openapi.check('PATCH', '/api/partner/v1/reservations/{id}', cleared);
  assert.is(cleared.body.data.custom_message, null);
  assert.is(cleared.body.data.allergies, null);
  // Text with a visible character is kept as sent.
  const kept = await svc.api('PATCH', `/reservations/${r.id}`, {
    token: TOKENS.full,
    body: { allergies: ' nuts ' },
  });
  assert.is(kept.body.data.allergies, ' nuts ');
});

t('customers: a blank external_id or tag is refused, a blank note stored as null', async ({ svc }) => {
  for (const body of [{ external_id: ' ' }, { tags: ['a', '\u200b'] }]) {
    const res = await svc.api('POST', '/customers', {
      token: TOKENS.full,
      body: { name: 'Blank', on_match: 'create_new', ...body },
      invalid: true,
    });
    assert.is(res.status, 400, JSON.stringify(body));
    assert.is(res.body.error.code, 'VALIDATION_ERROR');
  }
  const c = await svc.api('POST', '/customers', {
    token: TOKENS.full,
    body: { name: 'Blank', on_match: 'create_new', note: ' \n ' },
  });
  assert.is(c.status, 201);
  assert.is(c.body.data.note, null);
  const id = c.body.data.id;
  await svc.api('PATCH', `/customers/${id}`, { token: TOKENS.full, body: { note: 'regular' } });
  const cleared = await svc.api('PATCH', `/customers/${id}`, {
    token: TOKENS.full,
    body: { note: '\u00a0' },
  });
  assert.is(cleared.status, 200);
  assert.is(cleared.body.data.note, null);
  const bad = await svc.api('PATCH', `/customers/${id}`, {
    token: TOKENS.full,
    body: { external_id: '\t' },
    invalid: true,
  });
  assert.is(bad.status, 400);
  // An inline customer on a reservation holds to the same rule.
  const inline = await create(
    svc,
    { start_at: at('13', '19:00'), customer: { name: 'Inline', tags: [' '] } },
    TOKENS.full,
    undefined,
    true,
  );
  assert.is(inline.status, 400);
});

t.run();
