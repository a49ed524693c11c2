// One rule, two read paths (src/privacy/reservation-text-owners.ts): over generated reservation logs
// appended through the sealing layer, whose box holds each text field reads the same folded over the
// events as stored (sealed: what the layer reads to seal a move's previous text), over the events
// opened (what the reservations projection reads, before and after an erasure), and as the
// projection's documents keep it (`text_owners`, projections/reservation-erasure.ts).
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ReservationSnapshot } from '../../commands/reservations/events';
import { evolveReservation, initialReservation } from '../../commands/reservations/evolve';
import { textOwners } from '../../projections/reservation-erasure';
import type { ReservationDoc } from '../../projections/reservations';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { type NewEvent, NO_STREAM, type RecordedEvent } from '../../src/ports/event-store';
import {
  foldTextOwners,
  NO_TEXT_OWNERS,
  TEXT_FIELDS,
  type TextOwnerState,
} from '../../src/privacy/reservation-text-owners';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';

const t = suite('privacy: whose box holds a reservation text field, stored and opened');

const CUSTOMERS = ['cus_a', 'cus_b', 'cus_c'] as const;
const customer = fc.constantFrom<string | null>(...CUSTOMERS, null);
const text = fc.constantFrom<string | null>(null, '', 'peanuts', 'window seat');
const metadata = fc.constantFrom<Record<string, string>>({}, { floor: '2' });

type Step =
  | { kind: 'update'; changes: Record<string, unknown> }
  | { kind: 'status'; to: string; reason: string | null }
  | { kind: 'feedback'; comment: string | null };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc
    .record(
      {
        customer_id: customer,
        allergies: text,
        custom_message: text,
        metadata,
        cancellation_reason: text,
        party_size: fc.integer({ min: 1, max: 8 }),
      },
      { requiredKeys: [] },
    )
    .map((changes) => ({ kind: 'update' as const, changes })),
  fc
    .record({
      to: fc.constantFrom('CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT', 'REJECTED', 'SEATED', 'DONE'),
      reason: text,
    })
    .map((s) => ({ kind: 'status' as const, ...s })),
  text.map((comment) => ({ kind: 'feedback' as const, comment })),
);

const log = fc.record({
  first: customer,
  allergies: text,
  custom_message: text,
  steps: fc.array(step, { maxLength: 8 }),
  erased: fc.subarray([...CUSTOMERS]),
});

/** The events a reservation's handlers would append for these steps (previous values as decide gives). */
type Log = typeof log extends fc.Arbitrary<infer T> ? T : never;

function events(l: Log): NewEvent[] {
  const base = { reservation_id: 'res_1', restaurant_id: 'r', at: '2026-11-27T20:00:00Z' };
  const out: NewEvent[] = [
    {
      type: 'ReservationCreated',
      data: {
        ...base,
        reservation: {
          reservation_id: 'res_1',
          customer_id: l.first,
          allergies: l.allergies,
          custom_message: l.custom_message,
          metadata: {},
          cancellation_reason: null,
          status: 'CONFIRMED',
        },
      },
    },
  ];
  let state = evolveReservation(initialReservation, { ...out[0], revision: 0 } as unknown as RecordedEvent);
  for (const s of l.steps) {
    const r = state.r as unknown as Record<string, unknown>;
    let e: NewEvent;
    if (s.kind === 'update') {
      const previous: Record<string, unknown> = {};
      for (const k of Object.keys(s.changes)) previous[k] = r[k] ?? null;
      e = { type: 'ReservationUpdated', data: { ...base, changes: s.changes, previous } };
    } else if (s.kind === 'status')
      e = { type: 'ReservationStatusChanged', data: { ...base, from: r.status, ...s } };
    else
      e = {
        type: 'ReservationFeedbackRecorded',
        data: { ...base, feedback: { rating: 4, comment: s.comment, answer: null } },
      };
    out.push(e);
    state = evolveReservation(state, e as unknown as RecordedEvent);
  }
  return out;
}

/** Each field's owner in a state: its listed owner, else the reservation's customer. */
const owned = (s: TextOwnerState) => ({
  customer: s.customer,
  fields: Object.fromEntries(
    TEXT_FIELDS.map((f) => [f, Object.hasOwn(s.owners, f) ? s.owners[f] : s.customer]),
  ),
});

/**
 * The oracle, from the generated steps alone (not the rule's code): each field is in the box of the
 * customer the reservation had when an event last wrote it (docs/AUDIT.md, right to erasure):
 * creation writes them all, an update the fields its changes name, a cancellation or a rejection the
 * cancellation reason, feedback the feedback; a change of customer alone moves nothing.
 */
function oracle(l: Log): ReturnType<typeof owned>[] {
  let customer = l.first;
  const fields: Record<string, string | null> = Object.fromEntries(TEXT_FIELDS.map((f) => [f, customer]));
  const out = [{ customer, fields: { ...fields } }];
  for (const s of l.steps) {
    if (s.kind === 'update') {
      if (Object.hasOwn(s.changes, 'customer_id')) customer = s.changes.customer_id as string | null;
      for (const f of ['allergies', 'custom_message', 'metadata', 'cancellation_reason'])
        if (Object.hasOwn(s.changes, f)) fields[f] = customer;
    } else if (s.kind === 'status') {
      if (['CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT', 'REJECTED'].includes(s.to))
        fields.cancellation_reason = customer;
    } else fields.feedback = customer;
    out.push({ customer, fields: { ...fields } });
  }
  return out;
}

/** Each prefix's state folded by the shared rule. */
const folds = (es: readonly RecordedEvent[]): TextOwnerState[] => {
  let s = NO_TEXT_OWNERS;
  return es.map((e) => (s = foldTextOwners(s, e.type, e.data)));
};

/** Each prefix's state as the reservations projection's documents keep it. */
function documents(es: readonly RecordedEvent[]): TextOwnerState[] {
  let state = initialReservation;
  let doc: ReservationDoc | null = null;
  const out: TextOwnerState[] = [];
  for (const e of es) {
    state = evolveReservation(state, e);
    const r = state.r as ReservationSnapshot;
    const owners = textOwners(doc, e);
    doc = {
      ...(r as ReservationDoc),
      ...(owners ? { text_owners: owners.byField, text_owner_ids: owners.ids } : {}),
    };
    out.push({ customer: r.customer_id ?? null, owners: owners?.byField ?? {} });
  }
  return out;
}

/** Runs with a sealed update: without any, the stored read would be tested on clear events only. */
let sealedUpdates = 0;

t('the stored, the opened, the erased and the projection’s reads agree at every event', async () => {
  await fc.assert(
    fc.asyncProperty(log, async (l) => {
      const inner = new MemoryEventStore();
      const keys = new MemoryKeyStore();
      const store = new SealingEventStore(inner, keys);
      for (const id of CUSTOMERS)
        await store.append(
          `customer-${id}`,
          [
            {
              type: 'CustomerCreated',
              data: { customer_id: id, restaurant_id: 'r', at: 't', profile: { name: `N ${id}` } },
            },
          ],
          NO_STREAM,
        );
      const es = events(l);
      // One append each, as the handlers do (the layer folds what it appended in between).
      for (let i = 0; i < es.length; i++)
        await store.append('reservation-res_1', [es[i] as NewEvent], i === 0 ? NO_STREAM : i - 1);
      const stored = await inner.readStream('reservation-res_1');
      const opened = await store.readStream('reservation-res_1');
      if (stored.some((e) => 'sealed' in e.data && e.type === 'ReservationUpdated')) sealedUpdates++;
      const expected = folds(stored);
      // The rule itself, against an oracle that does not use it (the reads below share it).
      assert.equal(expected.map(owned), oracle(l));
      assert.equal(folds(opened), expected);
      assert.equal(documents(opened), expected);
      for (const id of l.erased)
        await store.append(
          `customer-${id}`,
          [{ type: 'CustomerDeleted', data: { customer_id: id, restaurant_id: 'r', at: 't', reason: null } }],
          0,
        );
      const erased = await new SealingEventStore(inner, keys).readStream('reservation-res_1');
      assert.equal(folds(erased), expected);
      assert.equal(documents(erased), expected);
      // Every field is named by the fold, and only with an id the log holds.
      for (const s of expected)
        for (const f of TEXT_FIELDS) {
          const o = Object.hasOwn(s.owners, f) ? s.owners[f] : s.customer;
          assert.ok(o === null || (CUSTOMERS as readonly string[]).includes(o as string));
        }
    }),
    { numRuns: 150 },
  );
  assert.ok(sealedUpdates > 20, `${sealedUpdates} runs sealed an update`);
});

t.run();
