// What a source event is published as (spec §6, DESIGN.md §3, docs/WEBHOOKS.md). `data.object` is
// what the partner API's GET answers for that credential: the reservation or customer folded from its
// own stream up to the event (so a publisher running late still sends the state the event made), with
// the names it refers to and the customer's stats as the read models hold them when it is published.

import { customerStream, webhookTypeOf } from '../../commands/customers/events';
import { type CustomerState, evolveCustomer, initialCustomer } from '../../commands/customers/state';
import {
  CUSTOMER_RELINKED,
  type RelinkReason,
  type ReservationSnapshot,
  type ReservationStatus,
} from '../../commands/reservations/events';
import {
  CANCELED_STATUSES,
  evolveReservation,
  initialReservation,
  type ReservationState,
} from '../../commands/reservations/evolve';
import type { V1EventType } from '../../commands/webhook-endpoints/events';
import { CUSTOMERS, type CustomerDoc, EMPTY_STATS } from '../../projections/customer-docs';
import {
  erasedValues,
  type TextField,
  textHolders,
  textOwnersAt,
} from '../../projections/reservation-erasure';
import { presentCustomer } from '../../queries/customer-presenter';
import { loadLookups } from '../../queries/reservation-lookups';
import { type Lookups, presentReservation, type ReservationView } from '../../queries/reservation-presenter';
import { findRestaurant } from '../../queries/restaurants';
import { publishesWebhook } from '../core/no-webhook';
import { distinctInOrder } from '../core/text';
import type { DocumentStore } from '../ports/document-store';
import { type EventStore, positionToString, type RecordedEvent } from '../ports/event-store';
import { erasedProfileFields } from '../privacy/seal';

export const LEGACY_TYPE = 'RESERVATION_UPDATED';

/**
 * Whether a delivery's body reads erased in the log: its fan-out is marked erased (the customer it
 * describes was erased since) and holds its payload no more. Read from the fan-out, never the read
 * model; asked before a resend (commands/webhook-deliveries/handler.ts, refused up front) and before
 * an attempt (the publisher, canceled). False for a delivery without a body (a test).
 */
export async function deliveryBodyErased(
  events: Pick<EventStore, 'readStream'>,
  delivery: { fanout_stream: string | null; payload: string | null },
): Promise<boolean> {
  if (!delivery.fanout_stream || !delivery.payload) return false;
  const [fanout] = await events.readStream(delivery.fanout_stream, { limit: 1 });
  const payloads = (fanout?.data as { payloads?: Record<string, string> } | undefined)?.payloads;
  return fanout?.data.erased === true && payloads?.[delivery.payload] === undefined;
}

/** A delivery's body as the log reads it now (undefined: none, or erased). */
export async function storedBody(
  events: Pick<EventStore, 'readStream'>,
  delivery: { fanout_stream: string | null; payload: string | null },
): Promise<string | undefined> {
  if (!delivery.fanout_stream || !delivery.payload) return undefined;
  const [fanout] = await events.readStream(delivery.fanout_stream, { limit: 1 });
  return (fanout?.data as { payloads?: Record<string, string> } | undefined)?.payloads?.[delivery.payload];
}

/** The payload variants an event can have: v1 or legacy, with or without contact details. */
export type Variant = 'v1' | 'v1_sensitive' | 'legacy' | 'legacy_sensitive';

export interface PublishedEvent {
  restaurantId: string;
  kind: 'reservation' | 'customer';
  v1Type: V1EventType;
  /** The source event's time (X-Service-Timestamp, `created`). */
  created: string;
  /** evt_ + the source event id: the same for every endpoint and every retry. */
  id: string;
  /**
   * The customer the bodies describe (a customer event's, a reservation's customer), or null: the
   * fan-out that stores the bodies is sealed with that customer's key (src/privacy/seal.ts), unless
   * `erased`.
   */
  customerId: string | null;
  /**
   * The bodies describe the customer erased (a deletion's: built with their personal fields erased,
   * whatever the reads said), so they are stored unsealed: their retries and resends are sent.
   */
  erased?: true;
  /**
   * Other customers the bodies describe beside `customerId` (a reservation's previous customer in
   * `previous_attributes.customer`, feedback given under another): the fan-out keeps, beside the
   * bodies, `standIn` bodies with their data erased, and the sealing layer seals the bodies with
   * their keys and `customerId`'s together, the stand-ins with `customerId`'s alone
   * (src/privacy/seal.ts, sealSplit): erasing one of them leaves the stand-in. Absent for most.
   */
  others?: string[];
  standIn?(variant: Variant): string;
  /** Bodies by variant, built on demand. */
  body(variant: Variant): string;
}

/**
 * Events marked `metadata.no_webhook` (every event a customer CSV import appends, src/core/no-webhook.ts)
 * publish nothing (spec §6); a customer created with origin IMPORT neither, whoever appended it.
 */
export function isImport(event: RecordedEvent): boolean {
  return !publishesWebhook(event) || (event.data as { origin?: string }).origin === 'IMPORT';
}

/**
 * Which source events can publish anything (a cheap test before any read). A customer's marketing
 * opt-outs are customer events not named Customer* (webhookTypeOf makes them customer.updated).
 */
export function isSourceEvent(type: string): boolean {
  return (
    (type.startsWith('Reservation') && type !== 'ReservationCreationAbandoned') ||
    type.startsWith('Customer') ||
    type.startsWith('MarketingOptOut')
  );
}

/** The v1 type of a reservation change, from the states before and after it (pure). */
export function reservationTypeOf(
  event: RecordedEvent,
  before: ReservationState,
  after: ReservationState,
): V1EventType | null {
  if (!after.exists || after.abandoned || !after.r) return null;
  if (event.type === 'ReservationCreated') return 'reservation.created';
  const to = (event.data as { to?: ReservationStatus }).to;
  if (
    event.type === 'ReservationStatusChanged' &&
    to &&
    CANCELED_STATUSES.includes(to) &&
    !(before.r && CANCELED_STATUSES.includes(before.r.status))
  )
    return 'reservation.canceled';
  return 'reservation.updated';
}

/** The top-level fields whose values differ, with their values before (Stripe's previous_attributes; pure). */
export function previousAttributes(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(after))
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) out[key] = before[key] ?? null;
  return out;
}

function fold<S>(events: RecordedEvent[], upTo: number, initial: S, evolve: (s: S, e: RecordedEvent) => S) {
  let before = initial;
  let after = initial;
  for (const e of events) {
    if (e.revision > upTo) break;
    before = after;
    after = evolve(after, e);
  }
  return { before, after };
}

const eventId = (sourceId: string) => `evt_${sourceId.replace(/-/g, '')}`;

function v1Body(
  p: { id: string; type: string; created: string; restaurantId: string },
  object: unknown,
  extra: Record<string, unknown>,
) {
  return JSON.stringify({
    id: p.id,
    type: p.type,
    api_version: 'v1',
    created: p.created,
    restaurant_id: p.restaurantId,
    data: { object, ...extra },
  });
}

/**
 * The event as published, or null when it publishes nothing (an import, a draft customer, an
 * abandoned reservation, a change that does not concern partners).
 */
export async function publishedEvent(
  events: EventStore,
  docs: DocumentStore,
  event: RecordedEvent,
): Promise<PublishedEvent | null> {
  if (!isSourceEvent(event.type) || isImport(event)) return null;
  const restaurantId = (event.data as { restaurant_id?: string }).restaurant_id;
  if (!restaurantId) return null;
  const reservation = event.type.startsWith('Reservation');
  // Known from the event alone: a customer event no webhook type answers for publishes nothing, and
  // its stream is not read (the merge slot's CustomerMergeSlot* events: that stream only grows).
  if (!reservation && webhookTypeOf(event) === null) return null;
  // A customer's creation is read with the event after it, which its own append may hold (a twin
  // created blacklisted: customerEvent announces the two as one).
  const ahead = event.type === 'CustomerCreated' ? 1 : 0;
  const history = await events.readStream(event.stream, { limit: event.revision + 1 + ahead });
  if (reservation) return reservationEvent(events, docs, event, restaurantId, history);
  return customerEvent(docs, event, restaurantId, history);
}

/**
 * Whose key seals the bodies of a reservation without a customer: they still hold another customer's
 * personal data when the event took the reservation from them (`previous_attributes.customer`, their
 * profile) or when its text is still in their boxes (projections/reservation-erasure.ts); stored in
 * clear, that stayed readable in the log and was resent after their erasure. Null when they hold none.
 */
function detachedHolder(
  before: ReservationSnapshot | null,
  lookups: Awaited<ReturnType<typeof loadLookups>>,
  history: RecordedEvent[],
  revision: number,
): string | null {
  const previous = before?.customer_id;
  if (typeof previous === 'string' && lookups.customers.has(previous)) return previous;
  const now = textHolders(history, revision)[0];
  if (now !== undefined) return now;
  // The text the event changed, as it was (`previous_attributes`): in the boxes of whoever held it then
  // (a reservation detached from its customer keeps their text), not nobody's.
  const event = history.find((e) => e.revision === revision);
  const changes = (event?.data as { changes?: object } | undefined)?.changes ?? {};
  for (const [f, owner] of Object.entries(textOwnersAt(history, revision - 1)))
    if (typeof owner === 'string' && Object.hasOwn(changes, f)) return owner;
  return null;
}

/** Whether the reservation changed customers up to revision `upTo` (else its text is all its customer's). */
const changedHands = (history: readonly RecordedEvent[], upTo: number): boolean =>
  history.some(
    (e) =>
      e.revision <= upTo &&
      e.type === 'ReservationUpdated' &&
      Object.hasOwn((e.data as { changes?: object }).changes ?? {}, 'customer_id'),
  );

/** A reservation snapshot with the fields `erase` says erased (a stand-in's, below). */
function withErased(r: ReservationSnapshot, erase: readonly TextField[]): ReservationSnapshot {
  if (erase.length === 0) return r;
  return { ...r, ...erasedValues(r.feedback, erase) } as unknown as ReservationSnapshot;
}

async function reservationEvent(
  events: EventStore,
  docs: DocumentStore,
  event: RecordedEvent,
  restaurantId: string,
  history: RecordedEvent[],
) {
  const folded = fold(history, event.revision, initialReservation, evolveReservation);
  const before = folded.before;
  const type = reservationTypeOf(event, before, folded.after);
  if (!type || !folded.after.r) return null;
  const restaurant = await findRestaurant(docs, restaurantId);
  const snapshots = before.r ? [before.r, folded.after.r] : [folded.after.r];
  let lookups = await loadLookups(docs, restaurantId, snapshots);
  const currency = restaurant?.currency ?? 'EUR';
  const relink =
    event.type === CUSTOMER_RELINKED
      ? await relinkParts(events, event, history, lookups, folded.after.r.customer_id)
      : null;
  if (relink) lookups = relink.lookups;
  const after = relink ? { ...folded.after, r: relink.after(folded.after.r) } : folded.after;
  if (!after.r) return null;
  const customerId =
    relink?.sealedFor ?? after.r.customer_id ?? detachedHolder(before.r, lookups, history, event.revision);
  const views = new Map<string, { before: ReservationView | null; after: ReservationView }>();
  type Views = { before: ReservationView | null; after: ReservationView };
  const view = (sensitive: boolean, standIn = false): Views => {
    const k = `${sensitive}${standIn}`;
    let v = views.get(k);
    if (!v) {
      const o = { sensitive, currency };
      const l = standIn ? (others as StandIn).lookups : lookups;
      const b = standIn && before.r ? withErased(before.r, (others as StandIn).before) : before.r;
      const a = standIn ? withErased(after.r as ReservationSnapshot, (others as StandIn).after) : after.r;
      v = {
        before: b ? presentReservation(b, l, o) : null,
        after: presentReservation(a as never, l, o),
      };
      views.set(k, v);
    }
    return v;
  };
  // The other customers the bodies describe (a reservation that changed hands only): a stand-in
  // without their data goes beside the bodies (PublishedEvent.others).
  const others: StandIn | null =
    customerId !== null && changedHands(history, event.revision)
      ? standIns(customerId, before.r, lookups, history, event.revision, (): string[] => {
          const v: Views = view(false);
          return v.before ? Object.keys(previousAttributes(v.before as never, v.after as never)) : [];
        })
      : null;
  const id = eventId(event.id);
  const base = { id, type, created: event.created, restaurantId };
  const build = (variant: Variant, standIn: boolean) => {
    const v = view(variant.endsWith('_sensitive'), standIn);
    let changed = v.before ? previousAttributes(v.before as never, v.after as never) : {};
    if (relink && v.before)
      changed = {
        customer: relink.previous(variant.endsWith('_sensitive')),
        updated_at: v.before.updated_at,
      };
    else if (standIn && v.before) {
      // The same fields as the body's own, with the values the stand-in has.
      const full = view(variant.endsWith('_sensitive'));
      const keys = full.before
        ? Object.keys(previousAttributes(full.before as never, full.after as never))
        : [];
      const was = v.before as unknown as Record<string, unknown>;
      changed = Object.fromEntries(keys.map((k) => [k, was[k] ?? null]));
    }
    if (variant.startsWith('legacy'))
      return JSON.stringify({
        id,
        type: LEGACY_TYPE,
        created: event.created,
        restaurant_id: restaurantId,
        data: {
          change: type.slice('reservation.'.length),
          changed_fields: Object.keys(changed),
          reservation: v.after,
        },
      });
    return v1Body(
      base,
      v.after,
      type === 'reservation.updated' || type === 'reservation.canceled'
        ? { previous_attributes: changed }
        : {},
    );
  };
  const bodies = new Map<string, string>();
  const cached = (variant: Variant, standIn: boolean) => {
    const k = `${variant}${standIn}`;
    let b = bodies.get(k);
    if (b === undefined) {
      b = build(variant, standIn);
      bodies.set(k, b);
    }
    return b;
  };
  return {
    restaurantId,
    kind: 'reservation' as const,
    v1Type: type,
    created: event.created,
    id,
    customerId,
    ...(relink?.erased ? { erased: true as const } : {}),
    ...(others !== null
      ? { others: others.customers, standIn: (variant: Variant) => cached(variant, true) }
      : {}),
    body: (variant: Variant) => cached(variant, false),
  };
}

/**
 * What a ReservationCustomerRelinked publishes beside the reservation (commands/reservations/decide-relink.ts):
 * `previous_attributes.customer` is the customer it showed (its fields and the reservation's are the
 * same before and after the event, so nothing else would tell it). After a merge, the absorbed
 * customer as its own log reads (the survivor's reference is the body's). After a deletion, the
 * deleted customer's reference erased (ids and language kept, as customer.deleted tells them), the
 * reservation with no customer and the text in the erased customers' boxes erased, whatever a read
 * made before their keys' destruction still showed: nothing of theirs is copied into the fan-out,
 * which is then unsealed (retried and resent like customer.deleted) unless the reservation holds text
 * of another customer (feedback given under them), whose key then seals it.
 */
async function relinkParts(
  events: EventStore,
  event: RecordedEvent,
  history: RecordedEvent[],
  lookups: Lookups,
  linked: string | null,
) {
  const d = event.data as { reason: RelinkReason; previous: { customer_id: string } };
  const was = d.previous.customer_id;
  const customer = (await events.readStream(customerStream(was))).reduce(evolveCustomer, initialCustomer);
  const deleted = d.reason === 'CUSTOMER_DELETED';
  const profile = customer.profile;
  const ref = {
    id: was,
    name: deleted || !profile ? '[erased]' : profile.name,
    lang: profile?.lang ?? null,
    email: deleted ? null : (profile?.email ?? null),
    phone_number: deleted ? null : (profile?.phone_number ?? null),
  };
  // A messaging channel's draft was shown as no customer, and its id is never told (docs/customers.md).
  const previous = (sensitive: boolean) =>
    customer.draft ? null : sensitive ? ref : { id: ref.id, name: ref.name, lang: ref.lang };
  if (!deleted)
    return { lookups, after: (r: ReservationSnapshot) => r, previous, sealedFor: null, erased: false };
  // The deleted customer, and the one the reservation links when it was merged into them (deleted with them).
  const gone = new Set<string>([was]);
  if (linked !== null) gone.add(linked);
  const customers = new Map([...lookups.customers].filter(([id]) => !gone.has(id)));
  const owners = textOwnersAt(history, event.revision);
  const erase: TextField[] = [];
  const holders: string[] = [];
  for (const [f, owner] of Object.entries(owners) as [TextField, string | null][])
    if (typeof owner === 'string' && gone.has(owner)) erase.push(f);
    else if (typeof owner === 'string' && !holders.includes(owner)) holders.push(owner);
  return {
    lookups: { ...lookups, customers },
    after: (r: ReservationSnapshot) => withErased(r, erase),
    previous,
    sealedFor: holders[0] ?? was,
    erased: holders.length === 0,
  };
}

/** The other customers a reservation's bodies describe, and what a stand-in erases of them. */
interface StandIn {
  customers: string[];
  /** The lookups with their customer references erased. */
  lookups: Lookups;
  /** The fields of the snapshots before and after the event that are theirs. */
  before: TextField[];
  after: TextField[];
}

/**
 * The customers other than `customerId` whose data a reservation's bodies show after the event at
 * `revision` — the previous customer (`previous_attributes.customer`), the holders of text still in
 * their boxes (feedback given under them; previous text changed by the event) — or null when none.
 * `changedKeys`: the fields `previous_attributes` holds.
 */
function standIns(
  customerId: string,
  before: ReservationSnapshot | null,
  lookups: Lookups,
  history: RecordedEvent[],
  revision: number,
  changedKeys: () => string[],
): StandIn | null {
  const customers = new Set<string>();
  const previous = before?.customer_id;
  if (typeof previous === 'string' && previous !== customerId && lookups.customers.has(previous))
    customers.add(previous);
  const theirs = (owners: Partial<Record<TextField, string | null>>, only?: readonly string[]) => {
    const out: TextField[] = [];
    for (const [f, owner] of Object.entries(owners) as [TextField, string | null][])
      if (typeof owner === 'string' && owner !== customerId && (!only || only.includes(f))) {
        customers.add(owner);
        out.push(f);
      }
    return out;
  };
  const after = theirs(textOwnersAt(history, revision));
  const beforeFields = before ? theirs(textOwnersAt(history, revision - 1), changedKeys()) : [];
  if (customers.size === 0) return null;
  const refs = new Map(lookups.customers);
  for (const c of customers) {
    const ref = refs.get(c);
    if (ref) refs.set(c, { ...ref, name: '[erased]', email: null, phone_number: null });
  }
  return {
    customers: [...customers].sort(),
    lookups: { ...lookups, customers: refs },
    before: beforeFields,
    after,
  };
}

/** The customer fields an event can change, from the fold (pure). */
function customerFields(s: CustomerState) {
  const p = s.profile;
  if (!p) return {};
  return {
    external_id: p.external_id ?? null,
    name: p.name,
    email: p.email ?? null,
    phone_number: p.phone_number ?? null,
    country_code: p.country_code ?? null,
    lang: p.lang,
    // As presentCustomer shows them: an older customer may store repeats.
    tags: distinctInOrder(p.tags ?? []),
    note: p.note ?? null,
    custom_fields: p.custom_fields ?? {},
    newsletter_consent: p.newsletter_consent ?? false,
    marketing_opt_outs: s.optOuts,
    blacklisted: s.blacklisted,
  };
}

async function customerEvent(
  docs: DocumentStore,
  event: RecordedEvent,
  restaurantId: string,
  history: RecordedEvent[],
) {
  let type = webhookTypeOf(event) as V1EventType | null;
  if (!type) return null;
  // A customer created blacklisted (on_match create_new on the details of a blacklisted guest) is
  // announced once, by its creation, blacklisted: its CustomerBlacklisted `at_creation` publishes
  // nothing (webhookTypeOf) and is folded into the creation's state.
  const creation = history.find((e) => e.type === 'CustomerCreated');
  const next = history[event.revision + 1];
  const upTo =
    event.type === 'CustomerCreated' &&
    next?.type === 'CustomerBlacklisted' &&
    (next.data as { at_creation?: boolean }).at_creation === true
      ? next.revision
      : event.revision;
  const { before, after } = fold(history, upTo, initialCustomer, evolveCustomer);
  // A draft is invisible: nothing about it is published, except its flagging (a deletion for partners) and publication (a creation).
  if (event.type !== 'CustomerDraftFlagged' && after.draft) return null;
  if (event.type === 'CustomerDraftFlagged' && before.draft) return null;
  if (!after.profile) return null;
  const doc = await docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: after.customerId as string });
  const created = creation;
  // A deletion erases the customer (their keys are destroyed): its notice describes them erased, never
  // with what a read made before the destruction still showed.
  const deletion = event.type === 'CustomerDeleted';
  const fields = deletion ? { ...customerFields(after), ...erasedProfileFields() } : customerFields(after);
  const object = {
    ...(doc && doc.restaurant_id === restaurantId
      ? presentCustomer(doc)
      : {
          id: after.customerId as string,
          ...fields,
          stats: EMPTY_STATS,
          created_at: (created?.data as { at?: string } | undefined)?.at ?? event.created,
          updated_at: (event.data as { at?: string }).at ?? event.created,
        }),
    // The state the event made, even if the customer changed again since.
    ...fields,
    // So is updated_at: the read model's is the stamp of the last customer event it applied (`_pos`),
    // which is this event's only when that is this event. Ahead of it (a later change applied before
    // this one is published, as in a burst) or behind it (a lagging read model, scaled out), the event's
    // own time, the stamp's lower bound (equal to it below 1,000 changes a second in the restaurant):
    // never a later change's updated_at on this change's fields, which would make two payloads of
    // different states carry one updated_at and break ordering a customer's events by it.
    ...(doc && doc.restaurant_id === restaurantId && doc._pos !== positionToString(event.position)
      ? { updated_at: (event.data as { at?: string }).at ?? event.created }
      : {}),
  };
  const extra: Record<string, unknown> = {};
  if (type === 'customer.updated' || type === 'customer.merged')
    extra.previous_attributes = previousAttributes(customerFields(before), fields);
  if (type === 'customer.merged')
    extra.merged_customer_id = (event.data as { merged_customer_id: string }).merged_customer_id;
  if (type === 'customer.updated' && Object.keys(extra.previous_attributes as object).length === 0)
    type = null;
  if (!type) return null;
  const id = eventId(event.id);
  const body = v1Body({ id, type, created: event.created, restaurantId }, object, extra);
  return {
    restaurantId,
    kind: 'customer' as const,
    v1Type: type,
    created: event.created,
    id,
    customerId: after.customerId as string,
    ...(deletion ? { erased: true as const } : {}),
    body: () => body,
  };
}
