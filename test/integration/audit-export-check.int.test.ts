// docs/AUDIT.md's script that checks an `audit export` on its own, away from the service: taken from
// the doc as it is and run with node on exports of a real log, so the doc cannot go false unseen.
// Exports with and without --from, with events written before the chain (`"hash": null`, as
// EventStoreDB hands them out) and with an edited line.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { type ExportFilter, exportEvents } from '../../src/audit/export';
import { FixedClock } from '../../src/core/clock';
import { ANY } from '../../src/ports/event-store';

const dir = mkdtempSync(join(tmpdir(), 'couvert-export-check-'));
const clock = new FixedClock('2026-11-01T10:00:00.000Z');
const store = SqliteEventStore.open(join(dir, 'events.sqlite'), { clock });
const script = join(dir, 'check-export.mjs');

/** The first js block of the doc's tamper-evidence section, as written. */
function docScript(): string {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/AUDIT.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Tamper evidence'));
  const found = /```js\n([\s\S]*?)```/.exec(section);
  assert.ok(found, 'docs/AUDIT.md holds the script');
  return found[1] as string;
}

test.before(async () => {
  writeFileSync(script, docScript());
  const at = (rest: string) => ({ restaurant_id: rest, actor: 'operator:test' });
  // Two streams of rest_a, interleaved, one event a day; one of rest_b in between.
  for (let day = 0; day < 4; day++) {
    clock.set(`2026-11-0${day + 1}T10:00:00.000Z`);
    await store.append(
      'restaurant-rest_a',
      [
        {
          type: 'RestaurantUpdated',
          data: { restaurant_id: 'rest_a', day, note: 'é "q" \\' },
          metadata: at('rest_a'),
        },
      ],
      ANY,
    );
    await store.append(
      'reservation-res_1',
      [{ type: 'ReservationUpdated', data: { restaurant_id: 'rest_a', day }, metadata: at('rest_a') }],
      ANY,
    );
    await store.append(
      'reservation-res_b',
      [{ type: 'ReservationUpdated', data: { restaurant_id: 'rest_b', day }, metadata: at('rest_b') }],
      ANY,
    );
  }
  // A manager's stream, shared by the restaurants they were granted: created at none, granted rest_a,
  // then rest_b, then rest_a again.
  clock.set('2026-11-05T10:00:00.000Z');
  const user = (type: string, rest: string | null, secret: string) => ({
    type,
    data: { user_id: 'usr_1', ...(rest === null ? {} : { restaurant_id: rest }), note: secret },
    metadata: rest === null ? { actor: 'operator:test' } : at(rest),
  });
  await store.append('user-usr_1', [user('UserCreated', null, 'created-secret')], ANY);
  await store.append('user-usr_1', [user('UserGranted', 'rest_a', 'grant-a')], ANY);
  clock.set('2026-11-06T10:00:00.000Z');
  await store.append('user-usr_1', [user('UserGranted', 'rest_b', 'grant-b-secret')], ANY);
  await store.append('user-usr_1', [user('UserGranted', 'rest_a', 'grant-a-again')], ANY);
});

test.after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function exportOf(
  from: string | null,
  forceGeneric = false,
  restaurantId = 'rest_a',
): Promise<string[]> {
  const filter: ExportFilter = { restaurantId, from, to: null };
  let text = '';
  await exportEvents(
    store,
    filter,
    (chunk) => {
      text += chunk.toString();
    },
    undefined,
    { forceGeneric },
  );
  return text.split('\n').filter(Boolean);
}

/** The lines of rest_a's own streams (before the manager's), as the tests below count them. */
const ownLines = (lines: string[]) => lines.filter((l) => !l.includes('"user-usr_1"'));

function check(lines: string[], ...args: string[]): { code: number | null; out: string } {
  const file = join(dir, `export-${Math.random().toString(36).slice(2)}.ndjson`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const run = spawnSync(process.execPath, [script, file, ...args], { encoding: 'utf8' });
  assert.is(run.stderr, '', 'the script runs');
  return { code: run.status, out: run.stdout };
}

/** As EventStoreDB exports an event written before the chain existed. */
const unchained = (line: string) => JSON.stringify({ ...JSON.parse(line), hash: null });

test('a whole export checks', async () => {
  const lines = await exportOf(null);
  assert.is(ownLines(lines).length, 8);
  assert.equal(check(lines), { code: 0, out: '' });
});

test("a stream shared with another restaurant: the others' events are hash-only lines, and the export checks", async () => {
  for (const generic of [false, true]) {
    const lines = await exportOf(null, generic);
    const user = lines.filter((l) => l.includes('"user-usr_1"')).map((l) => JSON.parse(l));
    assert.equal(
      user.map((e) => [e.revision, e.type, e.withheld ?? false]),
      [
        [0, null, true],
        [1, 'UserGranted', false],
        [2, null, true],
        [3, 'UserGranted', false],
      ],
    );
    assert.equal(Object.keys(user[0]), [...Object.keys(user[1]), 'withheld']);
    const text = lines.join('\n');
    assert.not.match(text, 'rest_b', "nothing of the other restaurant's events");
    assert.not.match(text, 'secret');
    assert.equal(check(lines), { code: 0, out: '' });
    const from = await exportOf('2026-11-06T00:00:00.000Z', generic);
    assert.equal(check(from, '--from'), { code: 0, out: '' });
    // An edit of a withheld line's hash breaks the chain at the next line of the restaurant.
    const i = lines.findIndex((l) => l.includes('"user-usr_1"') && l.includes('"revision":2'));
    const edited = lines.map((l, j) => (j === i ? l.replace(/"hash":"[0-9a-f]/, '"hash":"x') : l));
    const run = check(edited);
    assert.is(run.code, 1);
    assert.match(run.out, 'hash mismatch: user-usr_1 revision 3');
    // A line removed before a withheld one: the revisions say so.
    const removed = check(lines.filter((_, j) => j !== i - 1));
    assert.is(removed.code, 1);
    assert.match(removed.out, 'revision(s) missing before user-usr_1 revision 2');
  }
  assert.equal(await exportOf(null, true), await exportOf(null), 'both paths write the same bytes');
});

test('an export made with --from checks when told so; untold, the missing start of its streams is said', async () => {
  const lines = ownLines(await exportOf('2026-11-03T00:00:00.000Z'));
  assert.is(lines.length, 4, 'days 3 and 4 of both streams');
  assert.equal(check(lines, '--from'), { code: 0, out: '' });
  const untold = check(lines);
  assert.is(untold.code, 1);
  assert.match(untold.out, 'stream starts after revision 0: restaurant-rest_a revision 2');
  assert.not.match(untold.out, 'hash mismatch');
});

test('events written before the chain (hash null): skipped, the next event chains to them recomputed', async () => {
  const lines = ownLines(await exportOf(null));
  // The first two events of each stream, as a log whose chain began after them hands them out.
  const old = lines.map((l, i) => (i < 4 ? unchained(l) : l));
  assert.equal(check(old), { code: 0, out: '' });
  const fromOld = ownLines(await exportOf('2026-11-02T00:00:00.000Z')).map((l, i) =>
    i < 2 ? unchained(l) : l,
  );
  assert.equal(check(fromOld, '--from'), { code: 0, out: '' });
});

test('a webhook endpoint written before 2026-11-28 with header values in clear: its lines read redacted, marked, and the export checks', async () => {
  // As a version before the sealing wrote them: the values in clear in the created event and in an
  // update's changes and previous.
  const stream = 'webhook-endpoint-we_legacy';
  const meta = { restaurant_id: 'rest_h', actor: 'operator:test' };
  clock.set('2026-11-07T10:00:00.000Z');
  await store.append(
    stream,
    [
      {
        type: 'WebhookEndpointCreated',
        data: { endpoint_id: 'we_legacy', restaurant_id: 'rest_h', headers: { 'X-Api-Key': 'clear-one' } },
        metadata: meta,
      },
      {
        type: 'WebhookEndpointUpdated',
        data: {
          endpoint_id: 'we_legacy',
          restaurant_id: 'rest_h',
          changes: { headers: { 'X-Api-Key': 'clear-two' } },
          previous: { headers: { 'X-Api-Key': 'clear-one' } },
        },
        metadata: meta,
      },
      {
        type: 'WebhookEndpointUpdated',
        data: { endpoint_id: 'we_legacy', restaurant_id: 'rest_h', changes: { url: 'https://x.test/h' } },
        metadata: meta,
      },
    ],
    ANY,
  );
  const lines = await exportOf(null, false, 'rest_h');
  assert.equal(await exportOf(null, true, 'rest_h'), lines, 'both paths write the same bytes');
  assert.not.match(lines.join('\n'), 'clear-');
  assert.equal(check(lines), { code: 0, out: '' });
  const parsed = lines.map((l) => JSON.parse(l));
  assert.equal(
    parsed.map((e) => e.redacted ?? false),
    [true, true, false],
  );
  assert.equal(Object.keys(parsed[0]).at(-1), 'redacted', 'after hash, as withheld');
  // The chain still holds the lines after them: an edit there is seen, and so is a redacted line's
  // hash rewritten (the next line chains to it).
  const edited = lines.map((l, i) => (i === 2 ? l.replace('x.test', 'y.test') : l));
  assert.match(check(edited).out, /^hash mismatch: webhook-endpoint-we_legacy revision 2 /);
  const rehashed = lines.map((l, i) => (i === 1 ? l.replace(/"hash":"[0-9a-f]/, '"hash":"x') : l));
  assert.match(check(rehashed).out, /^hash mismatch: webhook-endpoint-we_legacy revision 2 /);
});

test('a line that is not JSON (the file damaged) is reported, not a crash', async () => {
  const lines = ownLines(await exportOf(null));
  const damaged = lines.map((l, i) => (i === 2 ? l.replace('"data":{', '"data":{oops') : l));
  const run = check(damaged);
  assert.is(run.code, 1);
  assert.match(run.out, /^line 3 is not JSON: /m);
  assert.match(
    run.out,
    'hash mismatch: restaurant-rest_a revision 2',
    'the next line chains to what is lost',
  );
});

test('an edited line is reported, and so is a removed one', async () => {
  const lines = ownLines(await exportOf(null));
  const edited = lines.map((l, i) => (i === 2 ? l.replace('"day":1', '"day":7') : l));
  assert.not.equal(edited, lines);
  const run = check(edited);
  assert.is(run.code, 1);
  assert.match(run.out, /^hash mismatch: restaurant-rest_a revision 1 \(position \d+\)\n$/);
  const removed = check(lines.filter((_, i) => i !== 2));
  assert.is(removed.code, 1);
  assert.match(removed.out, 'hash mismatch: restaurant-rest_a revision 2');
  const removedWithFrom = check(
    lines.filter((_, i) => i !== 2),
    '--from',
  );
  assert.is(removedWithFrom.code, 1, 'also with --from: the stream started in the file');
});

test.run();
