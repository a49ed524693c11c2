// A full disk is told apart from a bug: SQLite's SQLITE_FULL and the file system's ENOSPC/EDQUOT (on the
// error or a cause) become 503 in the envelope with Retry-After; anything else is left as it is (500).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { storageFullError } from '../../src/core/errors';
import { toErrorResponse } from '../../src/http/envelope';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

test('SQLITE_FULL, ENOSPC and EDQUOT, also as a cause, answer 503 STORAGE_FULL with Retry-After', () => {
  for (const err of [
    coded('SQLITE_FULL', 'database or disk is full'),
    coded('ENOSPC', 'no space left on device'),
    coded('EDQUOT'),
    new Error('append failed', { cause: coded('SQLITE_FULL') }),
  ]) {
    const mapped = storageFullError(err);
    assert.ok(mapped, String(err));
    const r = toErrorResponse(mapped, 'req_1');
    assert.is(r.status, 503);
    assert.is(r.body.error.code, 'INTERNAL_ERROR');
    assert.equal(r.body.error.details, { reason: 'STORAGE_FULL' });
    assert.ok(Number(r.headers['retry-after']) >= 1);
  }
});

test('other failures are not taken for a full disk', () => {
  for (const err of [new Error('boom'), coded('SQLITE_IOERR'), coded('SQLITE_BUSY'), null, 'SQLITE_FULL'])
    assert.is(storageFullError(err), null);
});

test.run();
