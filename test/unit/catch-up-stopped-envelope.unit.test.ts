// A request still waiting for the read models when the process stops (runner.stop() rejects its
// catch-up with CatchUpStopped) is answered 503 in the envelope with Retry-After, as OAuth's
// temporarily_unavailable, not as a bug (500).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toErrorResponse } from '../../src/http/envelope';
import { oauthErrorResult } from '../../src/http/oauth-errors';
import { CatchUpStopped } from '../../src/projection/runner';

test('CatchUpStopped answers 503 INTERNAL_ERROR, details.reason SHUTTING_DOWN, with Retry-After', () => {
  const r = toErrorResponse(new CatchUpStopped(3), 'req_1');
  assert.is(r.status, 503);
  assert.is(r.body.error.code, 'INTERNAL_ERROR');
  assert.is(r.body.error.request_id, 'req_1');
  assert.equal(r.body.error.details, { reason: 'SHUTTING_DOWN' });
  assert.ok(Number(r.headers['retry-after']) >= 1);
  assert.not.match(r.body.error.message, /catch-up|event/);
});

test('the token endpoint answers it temporarily_unavailable (503), in RFC 6749 shape', () => {
  const r = oauthErrorResult(new CatchUpStopped(0), 'req_2');
  assert.is(r.status, 503);
  assert.is((r.body as { error: string }).error, 'temporarily_unavailable');
});

test('an other error is still a 500', () => {
  assert.is(toErrorResponse(new Error('catch-up stopped after 3 event(s)'), 'req_1').status, 500);
});

test.run();
