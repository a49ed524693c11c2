// A reservation stored before tags and attached_files dropped repeats may still hold some (in its
// snapshot and its events). Partners see one rule whatever its age: GET, the list and the history
// show each item once, and a PATCH resending the list it shows changes nothing.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { reservationStream } from '../../commands/reservations/events';
import { ANY } from '../../src/ports/event-store';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';

const t = suite<{ svc: ReservationService }>('reservations: repeats an older reservation stored');

t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const TAGS = ['vip', 'window', 'vip'];
const FILES = ['https://files.example.com/a.pdf', 'https://files.example.com/a.pdf'];

/** What a PATCH appended before the handlers dropped repeats. */
async function legacyPatch(svc: ReservationService, id: string): Promise<void> {
  const out = await svc.rt.events.append(
    reservationStream(id),
    [
      {
        type: 'ReservationUpdated',
        data: {
          reservation_id: id,
          restaurant_id: 'rest_demo',
          at: '2026-06-02T10:00:00.000Z',
          changes: { tags: TAGS, attached_files: FILES },
          previous: { tags: [], attached_files: [] },
        },
        metadata: { restaurant_id: 'rest_demo', actor: 'credential:key_full', request_id: 'req_legacy' },
      },
    ],
    ANY,
  );
  await svc.rt.settle(out.position);
}

t('reads show each tag and file once; resending them is no change', async ({ svc }) => {
  const created = await create(svc, { external_id: 'legacy-repeats' });
  assert.is(created.status, 201, created.text);
  const id = created.body.data.id;
  await legacyPatch(svc, id);

  const one = (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;
  assert.equal(one.tags, ['vip', 'window']);
  assert.equal(one.attached_files, ['https://files.example.com/a.pdf']);
  const list = (await svc.api('GET', '/reservations?external_id=legacy-repeats', { token: TOKENS.full })).body
    .data;
  assert.equal(list[0].tags, ['vip', 'window']);
  assert.equal(list[0].attached_files, ['https://files.example.com/a.pdf']);

  const history = async () =>
    (await svc.api('GET', `/reservations/${id}/history`, { token: TOKENS.full })).body.data as {
      changes: { field: string; from?: unknown; to?: unknown }[];
    }[];
  const before = await history();
  const told = before.flatMap((i) => i.changes).filter((c) => c.field === 'tags');
  assert.equal(told.at(-1)?.to, ['vip', 'window'], 'the last `to` is what GET shows');

  const same = await svc.api('PATCH', `/reservations/${id}`, {
    token: TOKENS.full,
    body: { tags: ['vip', 'window'], attached_files: ['https://files.example.com/a.pdf'] },
  });
  assert.is(same.status, 200, same.text);
  assert.equal(same.body.data.tags, ['vip', 'window']);
  assert.is((await history()).length, before.length, 'nothing appended');
});

t.run();
