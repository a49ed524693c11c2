// The caller's cooldown across caller-key periods (src/privacy/caller-ids.ts): a slot is taken in the
// current period's stream, the previous period's is read, and a call in the last IN_FLIGHT_MS of a
// period claims the next period's stream too, so two calls from one number never both get a message
// within the cooldown, whichever side of a period's turn they fall.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { evolveCaller, initialCaller } from '../../commands/missed-calls/decide';
import { COOLDOWN_MS, callerStream } from '../../commands/missed-calls/events';
import { reportMissedCall } from '../../commands/missed-calls/handler';
import type { CommandMeta } from '../../src/core/command-meta';
import type { MessageSender } from '../../src/ports/message-sender';
import { CALLER_PERIOD_MS, callerIdsFrom, callerPeriod } from '../../src/privacy/caller-ids';
import {
  countingSender,
  type MissedCallWorld,
  missedCallWorld,
  worldRestaurant as restaurant,
} from '../helpers/missed-calls-world';

const meta: CommandMeta = { actor: 'test' };
const PHONE = '+33612345678';
const input = (external: string) => ({ caller_phone_number: '06 12 34 56 78', external_call_id: external });
/** 30 s before the 12:00 UTC turn of a 6-hour period. */
const NEAR_TURN = '2026-06-02T11:59:30Z';

const t = suite<{ w: MissedCallWorld }>('missed calls: the cooldown across caller-key periods');
t.before.each(async (ctx) => {
  ctx.w = await missedCallWorld(NEAR_TURN, meta);
});

const holderOf = async (w: MissedCallWorld, id: string) => {
  let s = initialCaller;
  for (const e of await w.events.readStream(callerStream(restaurant._id, id))) s = evolveCaller(s, e);
  return s.holder?.missed_call_id ?? null;
};

t(
  'a call just after the turn meets the slot a call took just before it; the cooldown then ends on time',
  async ({ w }) => {
    const provider = countingSender();
    const first = await reportMissedCall(w.deps(provider), restaurant, input('x-1'), meta);
    assert.is(first.outcome, 'SENT');
    w.clock.advance(40);
    assert.is(callerPeriod(w.clock.now()), callerPeriod(new Date(NEAR_TURN)) + 1, 'the period turned');
    const second = await reportMissedCall(w.deps(provider), restaurant, input('x-2'), meta);
    assert.is(second.outcome, 'SKIPPED_COOLDOWN');
    w.clock.advance(COOLDOWN_MS / 1000 - 41);
    assert.is(
      (await reportMissedCall(w.deps(provider), restaurant, input('x-3'), meta)).outcome,
      'SKIPPED_COOLDOWN',
    );
    w.clock.advance(1);
    assert.is((await reportMissedCall(w.deps(provider), restaurant, input('x-4'), meta)).outcome, 'SENT');
    assert.is(provider.accepted.length, 2);
  },
);

t(
  'a slot taken mid-period is read from the next period; two periods on it is not read any more',
  async ({ w }) => {
    const provider = countingSender();
    w.clock.advance(-3 * 3600);
    assert.is((await reportMissedCall(w.deps(provider), restaurant, input('x-1'), meta)).outcome, 'SENT');
    w.clock.advance(CALLER_PERIOD_MS / 1000 - 60);
    assert.is(
      (await reportMissedCall(w.deps(provider), restaurant, input('x-2'), meta)).outcome,
      'SKIPPED_COOLDOWN',
    );
    const ids = await callerIdsFrom(w.keys).slots(restaurant._id, PHONE, w.clock.now());
    assert.is(ids.earlier.length, 1, 'the previous period is read');
    w.clock.advance(CALLER_PERIOD_MS / 1000);
    const later = await callerIdsFrom(w.keys).slots(restaurant._id, PHONE, w.clock.now());
    assert.not.ok(later.earlier.includes(ids.earlier[0] as string), 'two periods back is never read');
    assert.is((await reportMissedCall(w.deps(provider), restaurant, input('x-3'), meta)).outcome, 'SENT');
  },
);

t('near the turn the slot is claimed in the next period too, so a call there meets it', async ({ w }) => {
  const provider = countingSender();
  const r = await reportMissedCall(w.deps(provider), restaurant, input('x-1'), meta);
  assert.is(r.outcome, 'SENT');
  const ids = await callerIdsFrom(w.keys).slots(restaurant._id, PHONE, w.clock.now());
  assert.ok(ids.next, 'near the turn');
  assert.is(await holderOf(w, ids.take), r.call.id);
  assert.is(await holderOf(w, ids.next as string), r.call.id);
});

t(
  'the race at the turn: another call holding the next period makes the near-turn call yield and free its slot',
  async ({ w }) => {
    const provider = countingSender();
    const ids = await callerIdsFrom(w.keys).slots(restaurant._id, PHONE, w.clock.now());
    // Another process's call, 1 s after the turn, took the slot there before this one claimed it (it read
    // this period's stream before this call's take landed).
    await w.events.append(
      callerStream(restaurant._id, ids.next as string),
      [
        {
          type: 'MessageSlotTaken',
          data: {
            missed_call_id: 'mc_other',
            restaurant_id: restaurant._id,
            at: new Date(Date.parse(NEAR_TURN) + 31_000).toISOString(),
            caller: PHONE,
          },
        },
      ],
      'no_stream',
    );
    const r = await reportMissedCall(w.deps(provider), restaurant, input('x-1'), meta);
    assert.is(r.outcome, 'SKIPPED_COOLDOWN');
    assert.equal(provider.accepted, [], 'one message at most: the other call sends it');
    assert.is(await holderOf(w, ids.take), null, 'its own slot freed');
    assert.is(await holderOf(w, ids.next as string), 'mc_other');
  },
);

t('a send that fails frees the slot in every stream it took, even after the turn', async ({ w }) => {
  const failing: MessageSender = {
    name: 'failing',
    idempotent: false,
    async send() {
      w.clock.advance(45); // the provider answers after the turn
      return { status: 'refused', kind: 'unavailable', code: null, message: 'down' };
    },
  };
  const r = await reportMissedCall(w.deps(failing), restaurant, input('x-1'), meta);
  assert.ok(r.failure, 'a retryable failure');
  assert.is(callerPeriod(w.clock.now()), callerPeriod(new Date(NEAR_TURN)) + 1);
  const provider = countingSender();
  const next = await reportMissedCall(w.deps(provider), restaurant, input('x-2'), meta);
  assert.is(next.outcome, 'SENT', 'nothing was sent: the caller may get the next call’s message');
});

t.run();
