// The webhook endpoint limit's rules, directly (commands/webhook-endpoints/limit.ts): the slot fold,
// the take and release decisions, what a holder's own stream says, and the fence of a creation that
// never came.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  type CreateEndpointData,
  decideAbandon,
  decideCreateEndpoint,
  type EndpointState,
  evolveEndpoint,
  initialEndpoint,
} from '../../commands/webhook-endpoints/decide';
import {
  ABANDONED_AFTER_MS,
  decideReleaseSlot,
  decideTakeSlot,
  evolveSlots,
  type HolderStatus,
  holderStatus,
  initialSlots,
  MAX_ENDPOINTS_PER_RESTAURANT,
  type SlotsState,
  seededEvent,
  silentTooLong,
} from '../../commands/webhook-endpoints/limit';
import { BusinessRuleError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';

const t = suite('webhook endpoint limit: rules');
const AT = '2026-06-02T10:00:00.000Z';
const R = 'rest_a';

/** Folds events as a stream would hold them (revisions 0, 1, …). */
function fold<S>(initial: S, evolve: (s: S, e: RecordedEvent) => S, events: NewEvent[], from = 0): S {
  return events.reduce(
    (s, e, i) =>
      evolve(s, {
        id: `e${from + i}`,
        type: e.type,
        data: e.data,
        metadata: {},
        created: AT,
        stream: 's',
        revision: from + i,
        position: BigInt(from + i + 1),
      }),
    initial,
  );
}

const take = (state: SlotsState, endpointId: string, statuses?: Map<string, HolderStatus>) =>
  decideTakeSlot(
    state,
    { restaurantId: R, endpointId, limit: MAX_ENDPOINTS_PER_RESTAURANT, at: AT },
    statuses,
  );

/** A stream seeded with `n` endpoints we_0 … we_{n-1}. */
const seeded = (n: number) =>
  fold(initialSlots, evolveSlots, [
    seededEvent(
      R,
      Array.from({ length: n }, (_, i) => `we_${i}`),
      null,
      AT,
    ),
  ]);

const refusesWithLimit = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    assert.instance(err, BusinessRuleError);
    const e = err as BusinessRuleError;
    assert.is(e.status, 422);
    assert.is(e.code, 'VALIDATION_ERROR');
    assert.is(e.reason, 'ENDPOINT_LIMIT_REACHED');
    assert.is(e.message, 'A restaurant has at most 20 webhook endpoints; delete one first');
    return;
  }
  assert.unreachable('the take was not refused');
};

t('below the limit a take appends one slot; at the limit it is refused with ENDPOINT_LIMIT_REACHED', () => {
  assert.is(MAX_ENDPOINTS_PER_RESTAURANT, 20);
  const at19 = seeded(19);
  const events = take(at19, 'we_new');
  assert.equal(events, [
    { type: 'WebhookEndpointSlotTaken', data: { restaurant_id: R, endpoint_id: 'we_new', at: AT } },
  ]);
  const at20 = fold(at19, evolveSlots, events, 1);
  assert.is(at20.holders.size, 20);
  refusesWithLimit(() => take(at20, 'we_other'));
  // Holders the handler found live (or did not read) count.
  refusesWithLimit(() => take(at20, 'we_other', new Map([['we_0', 'live']])));
  refusesWithLimit(() => take(at20, 'we_other', new Map([['we_new', 'pending']])));
});

t('two takes decided on the same state: the second, decided again after the first, is refused', () => {
  // What optimistic concurrency gives: both decide on 19, one append lands, the other reloads.
  const at19 = seeded(19);
  const first = take(at19, 'we_a');
  const second = take(at19, 'we_b');
  assert.is(first.length, 1);
  assert.is(second.length, 1);
  refusesWithLimit(() => take(fold(at19, evolveSlots, first, 1), 'we_b'));
});

t('a take by an endpoint that holds a slot already appends nothing (a retried create)', () => {
  assert.equal(take(seeded(20), 'we_3'), []);
});

t('a take by an endpoint whose held slot was fenced as abandoned releases it and takes one anew', () => {
  // Its creation was fenced, and the release that goes with the fence never landed: retried with the
  // same id (a bootstrap file's, the demo's), it would otherwise keep the fenced slot and be refused.
  const full = seeded(20);
  const events = take(full, 'we_3', new Map([['we_3', 'abandoned']]));
  assert.equal(
    events.map((e) => [e.type, e.data.endpoint_id, e.data.reason]),
    [
      ['WebhookEndpointSlotReleased', 'we_3', 'ABANDONED'],
      ['WebhookEndpointSlotTaken', 'we_3', undefined],
    ],
  );
  const after = fold(full, evolveSlots, events, 1);
  assert.is(after.holders.size, 20, 'it still counts once');
  assert.is(after.holders.get('we_3')?.revision, 2, 'under the new take');
});

t('at the limit, slots of deleted, abandoned and other restaurants endpoints are released first', () => {
  const full = seeded(20);
  const statuses = new Map<string, HolderStatus>([
    ['we_1', 'deleted'],
    ['we_2', 'abandoned'],
    ['we_3', 'other_restaurant'],
    ['we_4', 'pending'],
    ['we_5', 'live'],
  ]);
  const events = take(full, 'we_new', statuses);
  assert.equal(
    events.map((e) => [e.type, e.data.endpoint_id, e.data.reason]),
    [
      ['WebhookEndpointSlotReleased', 'we_1', 'ENDPOINT_DELETED'],
      ['WebhookEndpointSlotReleased', 'we_2', 'ABANDONED'],
      ['WebhookEndpointSlotReleased', 'we_3', 'OTHER_RESTAURANT'],
      ['WebhookEndpointSlotTaken', 'we_new', undefined],
    ],
  );
  const after = fold(full, evolveSlots, events, 1);
  assert.is(after.holders.size, 18);
  assert.ok(after.holders.has('we_4'), 'a creation still within its time keeps its slot');
  assert.ok(!after.holders.has('we_1'));
});

t('a limit of null (the bootstrap file) counts the slot but never refuses', () => {
  const events = decideTakeSlot(seeded(25), { restaurantId: R, endpointId: 'we_boot', limit: null, at: AT });
  assert.is(events.length, 1);
});

t('release: the held slot is given back once; a slot not held appends nothing', () => {
  const s = seeded(2);
  const events = decideReleaseSlot(s, R, 'we_1', 'DELETED', AT);
  assert.equal(events, [
    {
      type: 'WebhookEndpointSlotReleased',
      data: { restaurant_id: R, endpoint_id: 'we_1', reason: 'DELETED', at: AT },
    },
  ]);
  const after = fold(s, evolveSlots, events, 1);
  assert.equal([...after.holders.keys()], ['we_0']);
  assert.equal(decideReleaseSlot(after, R, 'we_1', 'DELETED', AT), []);
  assert.equal(decideReleaseSlot(initialSlots, R, 'we_1', 'DELETED', AT), []);
});

const created = (id: string, restaurantId = R): NewEvent => ({
  type: 'WebhookEndpointCreated',
  data: {
    endpoint_id: id,
    restaurant_id: restaurantId,
    credential_id: 'key_1',
    owner: 'key:key_1',
    api_version: 'v1',
    url: 'https://example.com/hook',
    description: null,
    enabled_events: ['*'],
    headers: {},
    disabled: false,
    secret: 'sealed',
    at: AT,
  },
});
const endpointOf = (events: NewEvent[]): EndpointState => fold(initialEndpoint, evolveEndpoint, events);

t("a holder's status comes from its own stream", () => {
  const holder = { takenAt: AT, revision: 7 };
  assert.is(holderStatus(endpointOf([]), holder, R), 'pending');
  assert.is(holderStatus(endpointOf([created('we_1')]), holder, R), 'live');
  assert.is(holderStatus(endpointOf([created('we_1', 'rest_b')]), holder, R), 'other_restaurant');
  const deleted: NewEvent = {
    type: 'WebhookEndpointDeleted',
    data: { endpoint_id: 'we_1', restaurant_id: R, reason: 'DELETED', credential_id: 'key_1', at: AT },
  };
  assert.is(holderStatus(endpointOf([created('we_1'), deleted]), holder, R), 'deleted');
  const fence = decideAbandon(endpointOf([]), 'we_1', R, 7, AT);
  assert.is(holderStatus(endpointOf(fence), holder, R), 'abandoned');
  // A fence of another attempt (an earlier slot) does not make this one abandoned.
  assert.is(holderStatus(endpointOf(fence), { takenAt: AT, revision: 9 }, R), 'pending');
});

t('silence: a creation is abandoned ABANDONED_AFTER_MS after its slot was taken, not before', () => {
  const holder = { takenAt: AT, revision: 0 };
  const takenMs = Date.parse(AT);
  assert.not.ok(silentTooLong(holder, takenMs + ABANDONED_AFTER_MS - 1));
  assert.ok(silentTooLong(holder, takenMs + ABANDONED_AFTER_MS));
});

t('a fenced attempt can never create; the endpoint created first cannot be fenced', () => {
  const data = created('we_1').data as unknown as CreateEndpointData;
  const fence = decideAbandon(endpointOf([]), 'we_1', R, 3, AT);
  assert.equal(fence, [
    {
      type: 'WebhookEndpointAbandoned',
      data: { endpoint_id: 'we_1', restaurant_id: R, slot_revision: 3, at: AT },
    },
  ]);
  const fenced = endpointOf(fence);
  assert.equal(decideAbandon(fenced, 'we_1', R, 3, AT), [], 'fenced once');
  try {
    decideCreateEndpoint(fenced, data, 3);
    assert.unreachable('a late creation landed');
  } catch (err) {
    assert.is((err as { status?: number }).status, 409);
  }
  // Another attempt with a slot of its own (a bootstrap file applied again) may create it.
  assert.is(decideCreateEndpoint(fenced, data, 5).length, 1);
  assert.equal(decideAbandon(endpointOf([created('we_1')]), 'we_1', R, 3, AT), []);
});

t.run();
