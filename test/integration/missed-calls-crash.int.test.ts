// The write side of missed calls when a process dies in the middle: between "message requested" and
// the provider's answer being recorded, or between claiming an external_call_id and reporting the
// call. A replay must never send a second message: an idempotent sender (the outbox) re-sends the same
// attempt (recorded once); any other sender's attempt is recorded as unconfirmed and never re-sent.
// Also: a replay while the first request is still working waits for it, then answers 409.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { IN_FLIGHT_MS } from '../../commands/missed-calls/decide';
import { callerStream, externalCallClaimStream } from '../../commands/missed-calls/events';
import { loadCall, reportMissedCall } from '../../commands/missed-calls/handler';
import type { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { OUTBOX_EVENT, OutboxMessageSender } from '../../src/adapters/message-sender/outbox';
import { claim } from '../../src/core/claims';
import type { CommandMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import type { MessageSender, OutgoingMessage, SendResult } from '../../src/ports/message-sender';
import { callerIdsFrom } from '../../src/privacy/caller-ids';
import {
  countingSender,
  type MissedCallWorld,
  missedCallWorld,
  worldRestaurant,
} from '../helpers/missed-calls-world';

type World = MissedCallWorld;
const restaurant = worldRestaurant;
const meta: CommandMeta = { actor: 'test' };

const t = suite<{ w: World }>('missed calls: a process dying mid-call');
t.before.each(async (ctx) => {
  ctx.w = await missedCallWorld('2026-06-02T10:00:00Z', meta);
});

class ProcessDied extends Error {}

async function dies(run: () => Promise<unknown>): Promise<void> {
  const err = await run().then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, ProcessDied);
}

/** Hands the message on (or not), then "dies" before the caller can record the answer. */
function dying(inner: MessageSender | null): MessageSender & { calls: number } {
  return {
    name: inner?.name ?? 'dying',
    idempotent: inner?.idempotent ?? false,
    calls: 0,
    async send(m: OutgoingMessage): Promise<SendResult> {
      this.calls += 1;
      if (inner) await inner.send(m);
      throw new ProcessDied('the process died');
    },
  };
}

const counting = countingSender;

async function outboxed(events: MemoryEventStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const e of events.readAll())
    if (e.type === OUTBOX_EVENT) keys.push((e.data as { idempotency_key: string }).idempotency_key);
  return keys;
}

const input = (external: string) => ({ caller_phone_number: '06 12 34 56 78', external_call_id: external });

t(
  'outbox: died after the outbox recorded it; the replay re-sends the same attempt and one message exists',
  async ({ w }) => {
    const outbox = new OutboxMessageSender(w.events, w.clock);
    await dies(() => reportMissedCall(w.deps(dying(outbox)), restaurant, input('x-1'), meta));
    const [key] = await outboxed(w.events);
    assert.ok(key);
    w.clock.advance(IN_FLIGHT_MS / 1000);
    const replay = await reportMissedCall(w.deps(outbox), restaurant, input('x-1'), meta);
    assert.is(replay.outcome, 'SENT');
    assert.is(replay.call.outcome, 'SENT');
    assert.equal(await outboxed(w.events), [key], 'one message in the outbox');
    // And from then on a duplicate.
    assert.is(
      (await reportMissedCall(w.deps(outbox), restaurant, input('x-1'), meta)).outcome,
      'SKIPPED_DUPLICATE',
    );
  },
);

t('outbox: died before it reached the outbox; the replay sends it (once)', async ({ w }) => {
  const outbox = new OutboxMessageSender(w.events, w.clock);
  await dies(() => reportMissedCall(w.deps(dying(null)), restaurant, input('x-2'), meta));
  assert.equal(await outboxed(w.events), []);
  w.clock.advance(IN_FLIGHT_MS / 1000);
  assert.is((await reportMissedCall(w.deps(outbox), restaurant, input('x-2'), meta)).outcome, 'SENT');
  assert.is((await outboxed(w.events)).length, 1);
});

t(
  'a provider without idempotency: the open attempt is recorded unconfirmed, never sent again',
  async ({ w }) => {
    const provider = counting();
    await dies(() => reportMissedCall(w.deps(dying(provider)), restaurant, input('x-3'), meta));
    assert.is(provider.accepted.length, 1);
    w.clock.advance(IN_FLIGHT_MS / 1000);
    const replay = await reportMissedCall(w.deps(provider), restaurant, input('x-3'), meta);
    assert.is(replay.outcome, 'SKIPPED_DUPLICATE');
    assert.is(replay.call.outcome, 'SEND_UNCONFIRMED');
    assert.is(
      (await reportMissedCall(w.deps(provider), restaurant, input('x-3'), meta)).outcome,
      'SKIPPED_DUPLICATE',
    );
    assert.is(provider.accepted.length, 1, 'never sent twice');
    // The caller's slot stays taken (it may have left): another call from them cools down.
    const other = await reportMissedCall(
      w.deps(provider),
      restaurant,
      { caller_phone_number: '+33612345678' },
      meta,
    );
    assert.is(other.outcome, 'SKIPPED_COOLDOWN');
  },
);

t(
  'a replay while the first request is still at work waits, then answers 409 (nothing sent twice)',
  async ({ w }) => {
    const provider = counting();
    await dies(() => reportMissedCall(w.deps(dying(null)), restaurant, input('x-4'), meta));
    const started = Date.now();
    const err = await reportMissedCall(w.deps(provider), restaurant, input('x-4'), meta).catch((e) => e);
    assert.instance(err, ApiError);
    assert.is((err as ApiError).status, 409);
    assert.ok(Date.now() - started >= 4_000, 'it waited for the other request');
    assert.is(provider.accepted.length, 0);
  },
);

t(
  'died after claiming the external_call_id and before reporting: the replay reports and sends under that id',
  async ({ w }) => {
    const provider = counting();
    await claim(
      { events: w.events, clock: w.clock },
      externalCallClaimStream('rest_a', 'x-5'),
      'mc_orphan',
      meta,
    );
    w.clock.advance(IN_FLIGHT_MS / 1000);
    const r = await reportMissedCall(w.deps(provider), restaurant, input('x-5'), meta);
    assert.equal([r.call.id, r.outcome], ['mc_orphan', 'SENT']);
    assert.is((await loadCall({ events: w.events, clock: w.clock }, 'mc_orphan')).external_call_id, 'x-5');
    assert.equal(provider.accepted, ['mc_orphan.1']);
  },
);

t(
  "died after taking the caller's slot and before asking for its message: a cooldown only while it may still be at work",
  async ({ w }) => {
    const provider = counting();
    // Named by the keyed hash of the number, never the number (src/privacy/caller-ids.ts).
    const caller = callerStream(
      'rest_a',
      (await callerIdsFrom(w.keys).slots('rest_a', '+33612345678', w.clock.now())).take,
    );
    assert.not.match(caller, /612345678/);
    await w.events.append(
      caller,
      [
        {
          type: 'MessageSlotTaken',
          data: {
            missed_call_id: 'mc_ghost',
            restaurant_id: 'rest_a',
            at: w.clock.now().toISOString(),
            caller: '+33612345678',
          },
        },
      ],
      'no_stream',
    );
    const early = await reportMissedCall(
      w.deps(provider),
      restaurant,
      { caller_phone_number: '0612345678' },
      meta,
    );
    assert.is(early.outcome, 'SKIPPED_COOLDOWN');
    w.clock.advance(IN_FLIGHT_MS / 1000);
    const later = await reportMissedCall(
      w.deps(provider),
      restaurant,
      { caller_phone_number: '0612345678' },
      meta,
    );
    assert.is(later.outcome, 'SENT');
    assert.is(provider.accepted.length, 1);
  },
);

t(
  'a duplicate answers with where the call ends in the log, so its answer waits for the read models',
  async ({ w }) => {
    const provider = counting();
    const first = await reportMissedCall(w.deps(provider), restaurant, input('x-dup'), meta);
    assert.is(first.outcome, 'SENT');
    const again = await reportMissedCall(w.deps(provider), restaurant, input('x-dup'), meta);
    assert.is(again.outcome, 'SKIPPED_DUPLICATE');
    const [last] = await w.events.readStream(`missed-call-${first.call.id}`, {
      direction: 'backwards',
      limit: 1,
    });
    assert.is(again.position, last?.position ?? -1n);
    assert.is(provider.accepted.length, 1);
  },
);

t.run();
