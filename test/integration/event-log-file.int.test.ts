// What DATA_DIR/events.sqlite may be when the log opens: a new file, a Couvert log, or refused with a
// message naming the file. Before, another program's database was stamped with this code's schema
// version and WAL mode (so that program would take it for migrated), then the start failed with
// SQLite's "no such column: position"; a file that is not SQLite said only "file is not a database".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { NO_STREAM } from '../../src/ports/event-store';

const dir = mkdtempSync(join(tmpdir(), 'couvert-log-file-'));
let n = 0;
const file = () => join(dir, `events-${n++}.sqlite`);

const test = suite('event log file');
test.after(() => rmSync(dir, { recursive: true, force: true }));

function refusal(path: string): string {
  try {
    SqliteEventStore.open(path).close();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${path} was opened`);
}

test("another program's database is refused, named, and left as it was", () => {
  const path = file();
  const other = new Database(path);
  other.exec("CREATE TABLE events (a, b); INSERT INTO events VALUES (1, 'x'); CREATE TABLE users (name)");
  other.close();
  const message = refusal(path);
  assert.match(message, path);
  assert.match(message, 'is not a Couvert event log');
  assert.match(message, 'events, users');
  const after = new Database(path, { readonly: true });
  assert.is(after.pragma('user_version', { simple: true }), 0, 'no schema version written into it');
  assert.is(after.pragma('journal_mode', { simple: true }), 'delete', 'its journal mode unchanged');
  assert.equal(after.prepare('SELECT * FROM events').all(), [{ a: 1, b: 'x' }]);
  after.close();
});

test('a database with a schema version but no events table is refused, named', () => {
  const path = file();
  const other = new Database(path);
  other.exec('CREATE TABLE things (a)');
  other.pragma('user_version = 3');
  other.close();
  const message = refusal(path);
  assert.match(message, `${path} is not a Couvert event log`);
  assert.match(message, 'no events table');
});

test('a file that is not SQLite is refused, named', () => {
  const path = file();
  writeFileSync(path, Buffer.alloc(4096, 7));
  const message = refusal(path);
  assert.match(message, `${path} cannot be read as an SQLite database`);
});

test('a new file and an empty database become a log; a log opens again', async () => {
  const path = file();
  new Database(path).close();
  const log = SqliteEventStore.open(path);
  await log.append('s-1', [{ type: 'T', data: {}, metadata: {} }], NO_STREAM);
  await log.close();
  const again = SqliteEventStore.open(path);
  assert.is((await again.readStream('s-1')).length, 1);
  await again.close();
});

test.run();
