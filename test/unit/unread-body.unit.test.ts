// A body sent to a route that takes none is read and dropped; one that stops arriving is not waited
// for past the body deadline (BODY_TIMEOUT_MS), as Node alone would wait 5 minutes.
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { discardBody } from '../../src/http/unread-body';

const fakeCtx = () => {
  const req = new PassThrough();
  const headers: Record<string, string> = {};
  const set = (k: string, v: string) => {
    headers[k] = v;
  };
  const ctx = { req, set } as unknown as Context;
  return { req, headers, ctx };
};

test('a whole body is read to its end; the connection stays open', async () => {
  const { req, headers, ctx } = fakeCtx();
  const reading = discardBody(ctx, 1024, 60_000);
  req.end(Buffer.alloc(100));
  await reading;
  assert.equal(headers, {});
});

test('a body that stops arriving: reading ends at the deadline, the connection is closed after the answer', async () => {
  const { req, headers, ctx } = fakeCtx();
  req.write(Buffer.alloc(10));
  // Never ended: without a deadline this waits for ever.
  await discardBody(ctx, 1024, 0);
  assert.equal(headers, { connection: 'close' });
  assert.is(req.listenerCount('data'), 0, 'no longer read');
});

test.run();
