// The dashboard's uploads held for preview (src/web/import-uploads.ts): one memory budget for the files
// held and those being read; the oldest previews (the uploader's own first) are let go to make room,
// a file that cannot fit is refused, and a claimed upload (its import running) is out of reach.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PreparedImport } from '../../src/customer-import/engine';
import {
  claimUpload,
  findUpload,
  keepUpload,
  type Room,
  releaseRoom,
  reserveRoom,
  wasLetGo,
} from '../../src/web/import-uploads';

const prepared = {} as PreparedImport;
const NOW = 1_000_000;

function hold(server: object, userId: string, bytes: number, budget: number) {
  const room = reserveRoom(server, userId, bytes, budget, NOW);
  if ('refused' in room) throw new Error(`refused: ${room.refused}`);
  return keepUpload(
    server,
    room.reservation,
    {
      restaurantId: 'rest_a',
      userId,
      fileName: `${userId}.csv`,
      bytes,
      onMatch: 'return_existing',
      prepared,
    },
    NOW,
  );
}
const here = (server: object, u: { id: string; userId: string }) =>
  findUpload(server, u.id, u.userId, 'rest_a', NOW) !== null;

test('a file larger than the whole budget is refused, and nothing is let go for it', () => {
  const server = {};
  const a = hold(server, 'u1', 600, 1000);
  assert.equal(reserveRoom(server, 'u2', 1001, 1000, NOW), { refused: 'too_large' });
  assert.ok(here(server, a));
});

test('the oldest previews go first, the uploader’s own before anyone’s', () => {
  const server = {};
  const a = hold(server, 'u1', 300, 1000);
  const b = hold(server, 'u2', 300, 1000);
  const c = hold(server, 'u3', 300, 1000);
  // u3 uploads again: its own preview goes, not the older ones of others.
  const c2 = hold(server, 'u3', 300, 1000);
  assert.ok(here(server, a) && here(server, b) && here(server, c2));
  assert.not.ok(here(server, c));
  assert.not.ok(wasLetGo(server, c.id), 'replaced by its own user, not let go for room');
  // u4 needs 500: the oldest (u1's, then u2's) go until it fits.
  const d = hold(server, 'u4', 500, 1000);
  assert.not.ok(here(server, a));
  assert.ok(wasLetGo(server, a.id));
  assert.not.ok(here(server, b));
  assert.ok(here(server, c2) && here(server, d));
});

test('files being read count: past the budget with them alone a new file is refused, then fits once they end', () => {
  const server = {};
  const reading = reserveRoom(server, 'u1', 700, 1000, NOW) as Extract<Room, { reservation: unknown }>;
  assert.ok(reading.reservation);
  assert.equal(reserveRoom(server, 'u2', 400, 1000, NOW), { refused: 'busy' });
  releaseRoom(server, reading.reservation);
  releaseRoom(server, reading.reservation);
  const ok = reserveRoom(server, 'u2', 400, 1000, NOW);
  assert.ok('reservation' in ok);
});

test('a started import’s file is out of the budget’s reach', () => {
  const server = {};
  const a = hold(server, 'u1', 900, 1000);
  claimUpload(server, a, 'imp_1', NOW);
  // The whole budget is free for previews again; nothing can take the claimed file away.
  const b = hold(server, 'u2', 1000, 1000);
  assert.ok(here(server, b));
  assert.not.ok(wasLetGo(server, a.id));
  assert.is(a.prepared, prepared);
});

test.run();
