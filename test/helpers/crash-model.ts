// What a partner may expect to read back after the server died under load (DESIGN.md §1 rule 4), and
// the checks that compare it with what the restarted server shows.
//
// Every entity (reservation, customer) belongs to one client, which writes it one request at a time,
// so its writes have a known order and at most one of them is without an answer when the process dies.
// The model per entity: `state`, the last state known durable (the last 2xx answer, or what a check
// read back); `pending`, the write sent since and never answered. After a restart the entity must read
// exactly as `state`, or, when a write is pending, as `state` with that write applied (it may have
// landed). A refused write (4xx) changes nothing.
import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import type { SeatingHeldData } from '../../commands/availability/capacity-events';
import {
  type CapacityState,
  evolveCapacity,
  initialCapacity,
} from '../../commands/reservations/capacity-state';
import type { RecordedEvent } from '../../src/ports/event-store';

// biome-ignore lint/suspicious/noExplicitAny: API bodies, checked field by field
export type Json = any;

export type Answer = { status: number; body: Json } | { status: 'no-answer'; error: string };

export interface Write {
  kind: 'patch' | 'cancel' | 'customer_patch' | 'customer_update';
  body: Json;
  round: number;
}

export interface Entity {
  id: string;
  externalId: string | null;
  owner: number;
  state: Json;
  pending: Write | null;
  /** Writes of this entity a crash left without an answer, ever: their traces may stay until repair. */
  interrupted: Write[];
  /** 2xx answers since the entity was last compared with the server. */
  ackedSinceCheck: number;
}

export interface UnknownCreate {
  owner: number;
  body: Json;
  round: number;
  /** Counted as landed or not by a check. */
  settled?: boolean;
}

export const RELEASED = ['REJECTED', 'CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT'];
export const isLive = (r: Json) => !RELEASED.includes(r.status);

export class CrashModel {
  reservations = new Map<string, Entity>();
  customers = new Map<string, Entity>();
  /** Creates without an answer, by external_id (every create carries one). */
  unknownCreates = new Map<string, UnknownCreate>();
  unknownCustomerCreates = new Map<string, UnknownCreate>();
  /** Creates answered 4xx: nothing may exist under their external_id. */
  refusedCreates = new Set<string>();
  /** Reservations a crash caught between a move's capacity append and its update. */
  midMove = new Set<string>();
  /** Live reservations whose shown table another booking could take. */
  rebooked = new Set<string>();
  counts = {
    writes: 0,
    acknowledged: 0,
    refused: 0,
    unanswered: 0,
    /** Entities whose last acknowledged state was compared with what the restarted server shows. */
    verifiedLatest: 0,
    /** Acknowledged writes overtaken by a later acknowledged write of the same entity before a check. */
    verifiedSuperseded: 0,
    /** Writes without an answer found to have landed (adopted) or not. */
    unansweredLanded: 0,
    unansweredLost: 0,
  };
}

/** A reservation as compared: the linked customer by id only (its name is the customer's, read live). */
function normRes(r: Json): Json {
  return { ...r, customer: r.customer ? r.customer.id : null };
}
function normCustomer(c: Json): Json {
  const { stats: _stats, ...rest } = c;
  return rest;
}

function differences(actual: Json, expected: Json, ignore: readonly string[] = []): string[] {
  const keys = new Set([...Object.keys(actual), ...Object.keys(expected)]);
  return [...keys].filter((k) => !ignore.includes(k) && !isDeepStrictEqual(actual[k], expected[k]));
}

const show = (o: Json, keys: string[]) => JSON.stringify(Object.fromEntries(keys.map((k) => [k, o?.[k]])));

const SEATING_DERIVED = ['start_at', 'end_at', 'duration_minutes', 'party_size', 'tables', 'room', 'shift'];

/** Does `actual` read as `state` with `write` applied? Returns why not, or null. */
export function landedAs(state: Json, write: Write, actual: Json): string | null {
  const a = normRes(actual);
  const s = normRes(state);
  if (write.kind === 'cancel') {
    const expected = { ...s, status: 'CANCELED_BY_RESTAURANT', cancellation_reason: write.body.reason };
    const diff = differences(a, expected, ['updated_at']);
    return diff.length ? `not the cancel: ${show(a, diff)} vs ${show(expected, diff)}` : null;
  }
  if (write.kind === 'patch') {
    const b = write.body;
    const expected = { ...s };
    for (const k of ['custom_message', 'tags', 'metadata'] as const) if (k in b) expected[k] = b[k];
    const wantParty = b.party_size ?? s.party_size;
    const wantStart = Date.parse(b.start_at ?? s.start_at);
    const moved = wantParty !== s.party_size || wantStart !== Date.parse(s.start_at);
    const diff = differences(a, expected, ['updated_at', ...(moved ? SEATING_DERIVED : [])]);
    if (moved && a.party_size !== wantParty) diff.push('party_size');
    if (moved && Date.parse(a.start_at) !== wantStart) diff.push('start_at');
    return diff.length
      ? `not the patch ${JSON.stringify(b)}: ${show(a, diff)} vs ${show(expected, diff)}`
      : null;
  }
  const c = normCustomer(actual);
  const expected = { ...normCustomer(state) };
  for (const k of ['name', 'note', 'tags', 'newsletter_consent'] as const)
    if (k in write.body) expected[k] = write.body[k];
  const diff = differences(c, expected, ['updated_at']);
  return diff.length ? `not the ${write.kind} ${JSON.stringify(write.body)}: ${show(c, diff)}` : null;
}

/** A create without an answer that landed must carry what was asked. */
export function createdAs(body: Json, actual: Json): string | null {
  const wrong: string[] = [];
  if (actual.external_id !== body.external_id) wrong.push('external_id');
  if (actual.party_size !== body.party_size) wrong.push('party_size');
  if (Date.parse(actual.start_at) !== Date.parse(body.start_at)) wrong.push('start_at');
  if (actual.custom_message !== (body.custom_message ?? null)) wrong.push('custom_message');
  if (!isDeepStrictEqual(actual.tags, body.tags ?? [])) wrong.push('tags');
  if ((actual.customer?.id ?? null) !== (body.customer?.id ?? null)) wrong.push('customer');
  if (actual.status !== 'CONFIRMED') wrong.push('status');
  return wrong.length ? `differs from the create on ${wrong.join(', ')}` : null;
}

export function customerCreatedAs(body: Json, actual: Json): string | null {
  const wrong = ['name', 'email', 'external_id', 'note', 'tags', 'newsletter_consent'].filter(
    (k) => !isDeepStrictEqual(actual[k], body[k]),
  );
  return wrong.length ? `differs from the create on ${wrong.join(', ')}` : null;
}

/**
 * Compares every entity with what the server shows now (`listed`: every reservation or customer the
 * list routes return), then makes what it read the new known state. Returns the failures.
 */
export function checkEntities(
  what: 'reservation' | 'customer',
  entities: Map<string, Entity>,
  listed: Map<string, Json>,
  counts: CrashModel['counts'],
): string[] {
  const failures: string[] = [];
  const norm = what === 'reservation' ? normRes : normCustomer;
  for (const e of entities.values()) {
    const actual = listed.get(e.id);
    if (!actual) {
      failures.push(`${what} ${e.id} (${e.externalId}) was acknowledged and is missing`);
      continue;
    }
    const diff = differences(norm(actual), norm(e.state));
    if (diff.length) {
      const why = e.pending ? landedAs(e.state, e.pending, actual) : 'no write was pending';
      if (why)
        failures.push(
          `${what} ${e.id} does not read as acknowledged (${why}); differs on ${diff.join(', ')}: read ${show(norm(actual), diff)}, acknowledged ${show(norm(e.state), diff)}`,
        );
      else counts.unansweredLanded++;
    } else if (e.pending) counts.unansweredLost++;
    if (e.ackedSinceCheck > 0) {
      counts.verifiedLatest++;
      counts.verifiedSuperseded += e.ackedSinceCheck - 1;
    }
    e.ackedSinceCheck = 0;
    e.state = actual;
    e.pending = null;
  }
  return failures;
}

/**
 * Two live reservations on one table at overlapping times. `explain` may say why one of a pair is
 * there (so a failure names its cause).
 */
export function overlaps(
  reservations: Json[],
  explain: (id: string) => string | null = () => null,
): string[] {
  const failures: string[] = [];
  const byTable = new Map<string, Json[]>();
  for (const r of reservations.filter(isLive))
    for (const t of r.tables) byTable.set(t.id, [...(byTable.get(t.id) ?? []), r]);
  for (const [table, rs] of byTable) {
    rs.sort((x, y) => Date.parse(x.start_at) - Date.parse(y.start_at));
    for (let i = 1; i < rs.length; i++)
      for (let j = i - 1; j >= 0; j--) {
        if (Date.parse(rs[j].end_at) <= Date.parse(rs[i].start_at)) continue;
        const why = [explain(rs[j].id), explain(rs[i].id)].filter(Boolean).join('; ');
        failures.push(
          `table ${table} is held twice: ${rs[j].id} ${rs[j].start_at}–${rs[j].end_at} and ${rs[i].id} ${rs[i].start_at}–${rs[i].end_at}${why ? ` (${why})` : ''}`,
        );
      }
  }
  return failures;
}

/** Every capacity stream of the restaurant, folded as the write side folds it (read-only access). */
export function readCapacity(file: string, restaurantId: string): Map<string, CapacityState> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare('SELECT stream, type, data FROM events WHERE stream >= ? AND stream < ? ORDER BY position')
      .all(`capacity-${restaurantId}-`, `capacity-${restaurantId}-~`) as {
      stream: string;
      type: string;
      data: string;
    }[];
    const days = new Map<string, CapacityState>();
    for (const row of rows) {
      const day = row.stream.slice(`capacity-${restaurantId}-`.length);
      const event = { type: row.type, data: JSON.parse(row.data) } as unknown as RecordedEvent;
      days.set(day, evolveCapacity(days.get(day) ?? initialCapacity, event));
    }
    return days;
  } finally {
    db.close();
  }
}

const dayOf = (iso: string) => new Date(iso).toISOString().slice(0, 10);

export const seatingMatches = (r: Json, s: SeatingHeldData) =>
  Date.parse(r.start_at) === Date.parse(s.start_at) &&
  Date.parse(r.end_at) === Date.parse(s.end_at) &&
  r.party_size === s.party_size &&
  isDeepStrictEqual(
    r.tables.map((t: Json) => t.id),
    s.table_ids,
  );

export interface CapacityFindings {
  failures: string[];
  /**
   * Live reservations whose move was recorded, but whose capacity stream still holds it as pending
   * (a crash between ReservationUpdated and SeatingMoveConfirmed): the repair confirms it.
   */
  unconfirmed: Map<string, SeatingHeldData>;
  /** Live reservations with a move pending on a capacity stream (recorded or not). */
  midMove: Set<string>;
  /** Seatings no live reservation stands behind, and moves nobody recorded (an interrupted write). */
  leftovers: SeatingHeldData[];
}

/**
 * The write side's capacity against the reservations: no table held twice (pending moves count as
 * held); every live reservation holds its own seating (or, a crash having come between its update
 * and the confirmation, its move's); anything else held is the trace of a write a crash interrupted,
 * which the repair job settles later. `strict` (after the repair): no trace may remain.
 */
export function checkCapacity(
  capacity: Map<string, CapacityState>,
  listed: Map<string, Json>,
  model: CrashModel,
  strict: boolean,
): CapacityFindings {
  const failures: string[] = [];
  const unconfirmed = new Map<string, SeatingHeldData>();
  const midMove = new Set<string>();
  const leftovers: SeatingHeldData[] = [];
  const pendingOf = (state: CapacityState) =>
    [...state.pending.values()].flatMap((byId) => [...byId.values()]);
  for (const [day, state] of capacity) {
    const taken = [...state.held.values(), ...pendingOf(state)];
    for (let i = 0; i < taken.length; i++)
      for (let j = 0; j < i; j++) {
        const a = taken[i] as SeatingHeldData;
        const b = taken[j] as SeatingHeldData;
        if (a.reservation_id === b.reservation_id) continue;
        const shared = a.table_ids.filter((t) => b.table_ids.includes(t));
        if (
          shared.length &&
          Date.parse(a.start_at) < Date.parse(b.end_at) &&
          Date.parse(b.start_at) < Date.parse(a.end_at)
        )
          failures.push(
            `capacity ${day}: ${a.reservation_id} and ${b.reservation_id} both hold ${shared.join(',')}`,
          );
      }
  }
  const interrupted = (id: string, pred: (w: Write) => boolean) =>
    (model.reservations.get(id)?.interrupted ?? []).some(pred);
  const moves = (w: Write) => w.kind === 'patch' && ('start_at' in w.body || 'party_size' in w.body);
  for (const r of listed.values()) {
    if (!isLive(r)) continue;
    const state = capacity.get(dayOf(r.start_at));
    for (const s of capacity.values()) if (s.pending.get(r.id)?.size) midMove.add(r.id);
    const own = state?.held.get(r.id);
    if (own && seatingMatches(r, own)) continue;
    const moved = [...(state?.pending.get(r.id)?.values() ?? [])].find((p) => seatingMatches(r, p));
    if (moved && !strict && interrupted(r.id, moves)) unconfirmed.set(r.id, moved);
    else
      failures.push(
        own
          ? `live reservation ${r.id} holds another seating than it shows (${own.start_at} ${own.table_ids} ×${own.party_size} vs ${r.start_at} ${r.tables.map((t: Json) => t.id)} ×${r.party_size})${moved ? ' after the repair' : ''}`
          : `live reservation ${r.id} (${r.start_at}) holds no seating on its day`,
      );
  }
  for (const [day, state] of capacity) {
    for (const s of state.held.values()) {
      const r = listed.get(s.reservation_id);
      if (r && isLive(r) && dayOf(r.start_at) === day) continue;
      let why: string | null = null;
      if (strict) why = 'after the repair';
      else if (r && isLive(r)) why = interrupted(r.id, moves) ? null : 'its reservation is on another day';
      else if (r) why = interrupted(r.id, () => true) ? null : `its reservation is ${r.status}`;
      else
        why =
          s.external_id && model.unknownCreates.has(s.external_id)
            ? null
            : 'no reservation exists and no create of it was interrupted';
      if (why)
        failures.push(
          `capacity ${day}: seating of ${s.reservation_id} (${s.external_id}) is still held: ${why}`,
        );
      else leftovers.push(s);
    }
    for (const s of pendingOf(state)) {
      if (unconfirmed.get(s.reservation_id) === s) continue;
      const why = strict
        ? 'after the repair'
        : interrupted(s.reservation_id, moves)
          ? null
          : 'no move of it was interrupted';
      if (why)
        failures.push(
          `capacity ${day}: a move of ${s.reservation_id} is still pending (${s.start_at}): ${why}`,
        );
      else leftovers.push(s);
    }
  }
  return { failures, unconfirmed, midMove, leftovers };
}
