// The scaled-out keys' database: the read models' name with `_keys`, cut to stay within MongoDB's
// 63-byte limit; and `backup`'s advice, scaled out, names that database, not the uncut `<db>_keys`
// (which an operator's dump would not find).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keysDatabaseName } from '../../src/adapters/key-store/keys-database-name';
import { scaledOutBackupAdvice } from '../../src/cli/backup-commands';

const test = suite('keys database name');

test('a short name gets `_keys`', () => {
  assert.is(keysDatabaseName('couvert'), 'couvert_keys');
});

test('within 63 bytes, a prefix of the name cut at a character boundary, whatever the name', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 70 }), (name) => {
      const keys = keysDatabaseName(name);
      assert.ok(Buffer.byteLength(keys) <= 63, keys);
      assert.ok(keys.endsWith('_keys'));
      const prefix = keys.slice(0, -'_keys'.length);
      assert.ok(name.startsWith(prefix));
      assert.not.ok(prefix.includes('\uFFFD'));
      if (Buffer.byteLength(name) <= 58) assert.is(prefix, name);
    }),
  );
});

test("backup's scaled-out advice names the keys database as the service opens it", () => {
  const long = `couvert_${'x'.repeat(52)}`; // 60 bytes: the keys database is cut
  const advice = scaledOutBackupAdvice('eventstoredb', long);
  assert.ok(advice.includes(`${long} and ${keysDatabaseName(long)})`), advice);
  assert.not.ok(advice.includes(`${long}_keys`), advice);
  assert.ok(scaledOutBackupAdvice('eventstoredb', 'couvert').includes('couvert and couvert_keys)'));
});

test.run();
