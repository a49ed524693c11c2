// What `audit history` and `audit as-of` can be asked about: each kind names the streams an id
// lives in and how to fold them into "the entity as it was". Modules may add theirs with
// registerAuditSubject; an id no kind knows is looked for in the whole log (any stream named after
// it, any event naming it in an *_id field).
import { evolveCatalog, initialCatalog } from '../../commands/catalog/decide';
import { evolveApiKey, initialApiKey } from '../../commands/credentials/decide';
import { evolveCustomer, initialCustomer } from '../../commands/customers/state';
import { evolveApplication, initialApplication } from '../../commands/oauth/applications';
import { applicationStream, userStream } from '../../commands/oauth/events';
import { evolveUser, initialUser } from '../../commands/oauth/users';
import { evolveReservation, initialReservation } from '../../commands/reservations/evolve';
import { nightSeatingsStream } from '../../commands/reservations/night-seatings';
import { evolveRestaurant, initialRestaurant } from '../../commands/restaurants/decide';
import { evolveEndpoint, initialEndpoint } from '../../commands/webhook-endpoints/decide';
import { webhookEndpointStream } from '../../commands/webhook-endpoints/events';
import type { RecordedEvent } from '../ports/event-store';

export interface AuditSubject {
  kind: string;
  /** The streams holding this id's events (read in this order, merged by position). */
  streams(id: string): string[];
  /** Folds the events of its streams (in log order) into what the entity was after the last of them. */
  fold?(events: RecordedEvent[]): unknown;
  /**
   * History also lists the events of other streams that name the id (found by a pass over the whole
   * log, as for an id no kind knows, unless --no-scan): a webhook endpoint's deliveries, an OAuth
   * application's connections and codes, the codes a manager approved. The fold reads only the
   * kind's own streams: those events describe something else (a delivery's status code or customer
   * is not the endpoint's).
   */
  scanToo?: boolean;
}

const foldWith =
  <S>(initial: S, evolve: (s: S, e: RecordedEvent) => S, view: (s: S) => unknown = (s) => s) =>
  (events: RecordedEvent[]) =>
    view(events.reduce(evolve, initial));

/**
 * Streams named `customer-…` that are no customer's: a restaurant's merge slot and import slot
 * (`customer-merge-slot-<restaurant>`, `customer-import-slot-<restaurant>`) and an import job
 * (`customer-import-<job>`). Customer ids (cus_…, an import's UUIDs) never start so: these ids are
 * looked for in the whole log instead of being folded as a customer.
 */
const NOT_A_CUSTOMER = /^(merge-slot|import)-/;

const subjects: AuditSubject[] = [
  {
    kind: 'reservation',
    streams: (id) => [`reservation-${id}`],
    fold: foldWith(initialReservation, evolveReservation, (s) => (s.abandoned ? { abandoned: true } : s.r)),
  },
  {
    kind: 'customer',
    streams: (id) => (NOT_A_CUSTOMER.test(id) ? [] : [`customer-${id}`]),
    fold: foldWith(initialCustomer, evolveCustomer),
  },
  { kind: 'credential', streams: (id) => [`apikey-${id}`], fold: foldWith(initialApiKey, evolveApiKey) },
  {
    kind: 'restaurant',
    // The night-seatings stream: whether a seating may have crossed midnight (night-seatings.ts).
    streams: (id) => [`restaurant-${id}`, `catalog-${id}`, nightSeatingsStream(id)],
    fold: (events) => {
      const catalog = events.filter((e) => e.stream.startsWith('catalog-'));
      const restaurantId = catalog[0]?.stream.slice('catalog-'.length) ?? '';
      const nights = events.filter((e) => e.stream.startsWith('night-seatings-'));
      return {
        restaurant: events
          .filter((e) => e.stream.startsWith('restaurant-'))
          .reduce(evolveRestaurant, initialRestaurant),
        catalog: catalog.length === 0 ? null : catalog.reduce(evolveCatalog, initialCatalog(restaurantId)),
        // Untracked (created before tracking) reads as true: every neighbouring day is read.
        seatings_may_cross_midnight:
          nights[0]?.type !== 'NightSeatingsTracked' ||
          nights.some((e) => e.type === 'SeatingsCrossMidnight'),
      };
    },
  },
  {
    kind: 'webhook-endpoint',
    streams: (id) => [webhookEndpointStream(id)],
    fold: foldWith(initialEndpoint, evolveEndpoint),
    scanToo: true,
  },
  {
    kind: 'oauth-application',
    streams: (id) => [applicationStream(id)],
    fold: foldWith(initialApplication, evolveApplication),
    scanToo: true,
  },
  { kind: 'user', streams: (id) => [userStream(id)], fold: foldWith(initialUser, evolveUser), scanToo: true },
];

export function registerAuditSubject(subject: AuditSubject): void {
  const at = subjects.findIndex((s) => s.kind === subject.kind);
  if (at >= 0) subjects[at] = subject;
  else subjects.push(subject);
}

export const auditSubjects = (): readonly AuditSubject[] => subjects;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The fold for a kind nobody registered: the last snapshot or changes of each event merged into one
 * object ("what the log says about it"), with the last event's type.
 */
export function genericFold(events: RecordedEvent[]): unknown {
  let state: Record<string, unknown> = {};
  for (const e of events) {
    const d = e.data;
    if (isObject(d.changes)) state = { ...state, ...d.changes };
    else {
      for (const [k, v] of Object.entries(d)) state[k] = v;
    }
    state.last_event = e.type;
  }
  return state;
}

/** A claim's `owner` (an external id's claim names the entity holding it) counts as an id field. */
const namesId = (k: string, v: unknown, id: string) =>
  v === id && (k === 'id' || k.endsWith('_id') || k === 'owner');

/**
 * A stream named after the id: `…-<id>`, or `…-<id>.<n>`, a key made of the id and an attempt number
 * (a missed call's outbox message, `message-outbox-<call id>.1`).
 */
function streamNamedAfter(stream: string, id: string): boolean {
  if (stream.endsWith(`-${id}`)) return true;
  const at = stream.lastIndexOf(`-${id}.`);
  return at >= 0 && /^\d+$/.test(stream.slice(at + id.length + 2));
}

/**
 * Whether an event names `id`: its stream is named after it, or a top-level *_id / id / owner field holds it,
 * or such a field of an object in a top-level list (a fan-out's `deliveries`: each delivery it
 * scheduled and its endpoint, so a delivery's history starts with its scheduling and an endpoint's
 * lists what was scheduled to it).
 */
export function eventNames(e: RecordedEvent, id: string): boolean {
  if (streamNamedAfter(e.stream, id)) return true;
  for (const [k, v] of Object.entries(e.data)) {
    if (namesId(k, v, id)) return true;
    if (Array.isArray(v))
      for (const item of v)
        if (isObject(item)) for (const [ik, iv] of Object.entries(item)) if (namesId(ik, iv, id)) return true;
  }
  return false;
}
