// Background work gives way to requests in flight (src/core/foreground.ts): at once when none is, when
// the last one is answered, or after the bound when requests keep coming.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  giveWayToRequests,
  requestDone,
  requestStarted,
  requestsInFlight,
  waitersForRequests,
} from '../../src/core/foreground';

const t = suite('foreground: requests first');

t('no request in flight: no wait at all (no promise)', () => {
  assert.is(requestsInFlight(), 0);
  assert.is(giveWayToRequests(), undefined);
});

t('waits while requests are in flight, goes on when the last is answered', async () => {
  requestStarted();
  requestStarted();
  let went = false;
  const waiting = giveWayToRequests(10_000)?.then(() => {
    went = true;
  });
  assert.ok(waiting);
  requestDone();
  await new Promise((r) => setImmediate(r));
  assert.not.ok(went, 'one request still in flight');
  requestDone();
  await waiting;
  assert.ok(went);
  assert.is(requestsInFlight(), 0);
});

t('never starved: goes on after the bound while requests keep coming', async () => {
  requestStarted();
  const began = performance.now();
  await giveWayToRequests(15);
  assert.ok(performance.now() - began >= 10, 'waited about the bound');
  assert.is(requestsInFlight(), 1);
  requestDone();
});

// Soak (bench/soak.ts): while one request stays in flight (a slow upload, a long report), an import's
// slices each gave way and went on at the bound, and every one of them left its waiter behind until no
// request was in flight: one closure per slice, for as long as requests kept coming.
t('a wait that ended at the bound leaves nothing behind while requests stay in flight', async () => {
  requestStarted();
  for (let i = 0; i < 50; i++) await giveWayToRequests(1);
  assert.is(waitersForRequests(), 0);
  const pending = giveWayToRequests(10_000);
  assert.is(waitersForRequests(), 1, 'a wait still running is kept');
  requestDone();
  await pending;
  assert.is(waitersForRequests(), 0);
  assert.is(requestsInFlight(), 0);
});

t('a count that would go below zero stays at zero', () => {
  requestDone();
  assert.is(requestsInFlight(), 0);
});

t.run();
