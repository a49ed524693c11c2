// Capacity: which tables are free for a seating, and how many covers a shift already holds on a day.
// Pure; the caller passes every booking that holds capacity (read side: the `bookings` projection;
// write side: the fold of the capacity stream, see capacity-events.ts).
import type { Table } from '../catalog/types';
import type { SeatingHeldData } from './capacity-events';

/** A seating that holds capacity: its tables for [startMs, endMs) and its covers for its shift and day. */
export interface Booking {
  reservation_id: string;
  /** The shift's day in the restaurant's calendar (YYYY-MM-DD). */
  service_date: string;
  shift_id: string;
  room_id: string | null;
  /** May be empty (a force-inserted reservation without a table holds covers only). */
  table_ids: readonly string[];
  /** Epoch ms; the seating occupies [start_ms, end_ms): touching seatings do not overlap. */
  start_ms: number;
  end_ms: number;
  party_size: number;
  /**
   * The guests left (DONE) or never came (NO_SHOW) at this instant: the tables are held for
   * [start_ms, heldEnd) only (see heldEnd); the covers stay counted. Absent: held to end_ms.
   */
  ended_ms?: number | null;
}

/**
 * Where a booking stops holding its tables: its end, or the moment it ended when that came first
 * (never before its start: a seating ended before it began holds its tables for no time at all).
 */
export const heldEnd = (b: Pick<Booking, 'start_ms' | 'end_ms' | 'ended_ms'>): number =>
  b.ended_ms == null ? b.end_ms : Math.max(b.start_ms, Math.min(b.end_ms, b.ended_ms));

/** The booking takes its tables for some time: an empty interval [t, t) meets nothing. */
const holdsTables = (b: Booking): boolean => b.table_ids.length > 0 && heldEnd(b) > b.start_ms;

/** A capacity-stream seating as a Booking. */
export const bookingFromSeating = (s: SeatingHeldData): Booking => ({
  reservation_id: s.reservation_id,
  service_date: s.service_date,
  shift_id: s.shift_id,
  room_id: s.room_id,
  table_ids: s.table_ids,
  start_ms: Date.parse(s.start_at),
  end_ms: Date.parse(s.end_at),
  party_size: s.party_size,
  ...(s.ended_at !== undefined ? { ended_ms: Date.parse(s.ended_at) } : {}),
});

/** Half-open intervals overlap when each starts before the other ends. */
export const overlaps = (aStart: number, aEnd: number, bStart: number, bEnd: number): boolean =>
  aStart < bEnd && bStart < aEnd;

/** One table's busy intervals sorted by start, with the running maximum of their ends. */
interface Busy {
  starts: number[];
  /** maxEnd[i] = max of the first i+1 ends: seatings may overlap (force-inserted), so ends alone are unsorted. */
  maxEnd: number[];
}

/** The index of one set of bookings (typically one service day). */
interface Part {
  /** Unique per index built: names this exact content in memo keys. */
  id: number;
  /** Sweep results computed against this part (and its neighbours), by key; see firstFreeForEach. */
  memo: Map<string, Int32Array>;
  busy: Map<string, Busy>;
  covers: Map<string, number>;
  /** Earliest start and latest end of the part: a seating outside [from, to) cannot meet it. */
  from: number;
  to: number;
}

let nextPartId = 1;

// Memo keys name arrays by content; the hot path passes the same cached arrays again and again,
// frozen, so their text can be kept by identity (an array that may still change is read every time).
const texts = new WeakMap<readonly unknown[], string>();
function textOf<T>(list: readonly T[], name: (x: T) => string): string {
  if (!Object.isFrozen(list)) return list.map(name).join(',');
  let text = texts.get(list);
  if (text === undefined) {
    text = list.map(name).join(',');
    texts.set(list, text);
  }
  return text;
}
const MEMO_LIMIT = 512;

function indexPart(bookings: readonly Booking[]): Part {
  const raw = new Map<string, [number, number][]>();
  const covers = new Map<string, number>();
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const b of bookings) {
    const key = `${b.service_date}|${b.shift_id}`;
    covers.set(key, (covers.get(key) ?? 0) + b.party_size);
    if (!holdsTables(b)) continue;
    const end = heldEnd(b);
    from = Math.min(from, b.start_ms);
    to = Math.max(to, end);
    for (const t of b.table_ids) {
      const list = raw.get(t);
      if (list) list.push([b.start_ms, end]);
      else raw.set(t, [[b.start_ms, end]]);
    }
  }
  const busy = new Map<string, Busy>();
  for (const [table, list] of raw) {
    list.sort((x, y) => x[0] - y[0]);
    const starts = new Array<number>(list.length);
    const maxEnd = new Array<number>(list.length);
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < list.length; i++) {
      const [start, end] = list[i] as [number, number];
      max = Math.max(max, end);
      starts[i] = start;
      maxEnd[i] = max;
    }
    busy.set(table, { starts, maxEnd });
  }
  return { id: nextPartId++, memo: new Map(), busy, covers, from, to };
}

function freeIn(busy: Busy | undefined, startMs: number, endMs: number): boolean {
  if (!busy) return true;
  // lo = how many seatings start before endMs; they overlap [startMs, endMs) iff one ends after startMs.
  let lo = 0;
  let hi = busy.starts.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((busy.starts[mid] as number) < endMs) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 || (busy.maxEnd[lo - 1] as number) <= startMs;
}

/** Index in `tables` of the first table free for each start, -1 for none. */
function sweep(
  near: readonly Part[],
  tables: readonly { id: string }[],
  starts: readonly number[],
  durationMs: number,
): Int32Array {
  const picks = new Int32Array(starts.length).fill(-1);
  let open = starts.length;
  const k: number[] = [];
  for (let ti = 0; ti < tables.length; ti++) {
    const id = (tables[ti] as { id: string }).id;
    const lists: Busy[] = [];
    for (const p of near) {
      const b = p.busy.get(id);
      if (b) lists.push(b);
    }
    k.length = lists.length;
    k.fill(0);
    for (let i = 0; i < starts.length; i++) {
      if (picks[i] !== -1) continue;
      const start = starts[i] as number;
      const end = start + durationMs;
      let free = true;
      // k[j]: how many seatings of lists[j] start before this seating ends (monotone over starts).
      for (let j = 0; j < lists.length; j++) {
        const busy = lists[j] as Busy;
        let n = k[j] as number;
        while (n < busy.starts.length && (busy.starts[n] as number) < end) n++;
        k[j] = n;
        if (n > 0 && (busy.maxEnd[n - 1] as number) > start) free = false;
      }
      if (free) {
        picks[i] = ti;
        if (--open === 0) return picks;
      }
    }
  }
  return picks;
}

function busyOf(list: readonly Booking[]): Busy {
  const starts = new Array<number>(list.length);
  const maxEnd = new Array<number>(list.length);
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < list.length; i++) {
    const b = list[i] as Booking;
    max = Math.max(max, heldEnd(b));
    starts[i] = b.start_ms;
    maxEnd[i] = max;
  }
  return { starts, maxEnd };
}

/**
 * One day's bookings, indexed as they come and go: what indexPart builds from scratch, kept up to
 * date instead (the write side's capacity fold, where rebuilding it for every create made a create
 * cost O(bookings of the day)). Adding or removing a booking costs O(bookings of its tables that
 * day); an Occupancy of the current content costs O(tables) and is a snapshot (later changes to
 * the index do not reach it).
 */
export class BookingIndex {
  /** Per table, its bookings sorted by start. */
  private readonly byTable = new Map<string, Booking[]>();
  private readonly busy = new Map<string, Busy>();
  private readonly covers = new Map<string, number>();
  // Bounds only widen (a removal keeps them): a wider [from, to) only means fewer parts skipped.
  private from = Number.POSITIVE_INFINITY;
  private to = Number.NEGATIVE_INFINITY;

  add(b: Booking): void {
    const key = `${b.service_date}|${b.shift_id}`;
    this.covers.set(key, (this.covers.get(key) ?? 0) + b.party_size);
    if (!holdsTables(b)) return;
    this.from = Math.min(this.from, b.start_ms);
    this.to = Math.max(this.to, heldEnd(b));
    for (const t of b.table_ids) {
      const list = this.byTable.get(t) ?? [];
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((list[mid] as Booking).start_ms <= b.start_ms) lo = mid + 1;
        else hi = mid;
      }
      list.splice(lo, 0, b);
      this.byTable.set(t, list);
      this.busy.set(t, busyOf(list));
    }
  }

  /** Removes a booking added earlier (found by reservation id on each of its tables). */
  remove(b: Booking): void {
    for (const t of b.table_ids) {
      const list = this.byTable.get(t);
      const i = list?.findIndex((x) => x.reservation_id === b.reservation_id) ?? -1;
      if (!list || i < 0) continue;
      list.splice(i, 1);
      if (list.length) this.busy.set(t, busyOf(list));
      else {
        this.byTable.delete(t);
        this.busy.delete(t);
      }
    }
    const key = `${b.service_date}|${b.shift_id}`;
    const left = (this.covers.get(key) ?? 0) - b.party_size;
    if (left) this.covers.set(key, left);
    else this.covers.delete(key);
  }

  /** The bookings held now, `except` (one of them) left out: a reservation's own seating when it moves. */
  occupancy(except?: Booking): Occupancy {
    const busy = new Map(this.busy);
    const covers = new Map(this.covers);
    if (except) {
      for (const t of new Set(except.table_ids)) {
        const list = (this.byTable.get(t) ?? []).filter((x) => x.reservation_id !== except.reservation_id);
        if (list.length) busy.set(t, busyOf(list));
        else busy.delete(t);
      }
      const key = `${except.service_date}|${except.shift_id}`;
      covers.set(key, (covers.get(key) ?? 0) - except.party_size);
    }
    return new Occupancy({
      part: { id: nextPartId++, memo: new Map(), busy, covers, from: this.from, to: this.to },
    });
  }
}

/**
 * Bookings indexed for a query: busy intervals per table (a table check is a binary search) and
 * covers per (service day, shift). Build one from bookings, or combine indexes built earlier (the
 * read side keeps one per service day and combines the days a query needs).
 */
export class Occupancy {
  private readonly parts: readonly Part[];

  /**
   * From bookings, or as the union of indexes of disjoint booking sets (e.g. one per service day), or
   * (BookingIndex) from a part it keeps up to date.
   */
  constructor(source: readonly Booking[] | { combine: readonly Occupancy[] } | { part: Part }) {
    if ('part' in source) this.parts = [source.part];
    else this.parts = 'combine' in source ? source.combine.flatMap((o) => o.parts) : [indexPart(source)];
  }

  /** No booking holds the table during any part of [startMs, endMs). */
  isFree(tableId: string, startMs: number, endMs: number): boolean {
    for (const p of this.parts)
      if (p.from < endMs && startMs < p.to && !freeIn(p.busy.get(tableId), startMs, endMs)) return false;
    return true;
  }

  /** The first of `tables` free for [startMs, endMs), or null. Parts that cannot meet the seating are skipped once, not per table. */
  firstFree<T extends { id: string }>(tables: readonly T[], startMs: number, endMs: number): T | null {
    const near: Part[] = [];
    for (const p of this.parts) if (p.from < endMs && startMs < p.to) near.push(p);
    search: for (const t of tables) {
      for (const p of near) if (!freeIn(p.busy.get(t.id), startMs, endMs)) continue search;
      return t;
    }
    return null;
  }

  /**
   * For each start (ascending), the first of `tables` free for [start, start + durationMs), or null.
   * One sweep per table over the starts (a pointer per busy list) instead of a search per start and
   * table, stopping once every start has a table: GET /availability's hot path. Indexes are
   * immutable and the read side keeps one per service day across requests, so the answer is also
   * remembered on the index it was computed against, keyed by everything it depends on.
   */
  firstFreeForEach<T extends { id: string }>(
    tables: readonly T[],
    starts: readonly number[],
    durationMs: number,
  ): (T | null)[] {
    if (starts.length === 0) return [];
    const lo = starts[0] as number;
    const hi = (starts[starts.length - 1] as number) + durationMs;
    const near = this.parts.filter((p) => p.from < hi && lo < p.to);
    if (near.length === 0) return starts.map(() => tables[0] ?? null);
    const key = `${near.map((p) => p.id).join(',')}|${durationMs}|${textOf(starts, String)}|${textOf(tables, (t) => t.id)}`;
    const memo = (near[0] as Part).memo;
    let picks = memo.get(key);
    if (!picks) {
      picks = sweep(near, tables, starts, durationMs);
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(key, picks);
    }
    return Array.from(picks, (i) => (i < 0 ? null : (tables[i] as T)));
  }

  /** Covers already held by the shift on its service day. */
  coversHeld(serviceDate: string, shiftId: string): number {
    const key = `${serviceDate}|${shiftId}`;
    let n = 0;
    for (const p of this.parts) n += p.covers.get(key) ?? 0;
    return n;
  }
}

export const tableSeats = (t: Table, partySize: number): boolean =>
  t.min_pax <= partySize && partySize <= t.max_pax;

/**
 * The tables able to seat the party, best fit first: smallest max_pax (keep big tables for big
 * parties), then smallest min_pax, then configured order. Compute once per party size and room.
 */
export function tablesFor(tables: readonly Table[], partySize: number, roomId?: string | null): Table[] {
  return tables
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => tableSeats(t, partySize) && (roomId == null || t.room_id === roomId))
    .sort((a, b) => a.t.max_pax - b.t.max_pax || a.t.min_pax - b.t.min_pax || a.i - b.i)
    .map(({ t }) => t);
}

/** The first free table of `candidates` (already ordered best fit first) for [startMs, endMs), or null. */
export function firstFreeTable(
  candidates: readonly Table[],
  occupancy: Occupancy,
  startMs: number,
  endMs: number,
): Table | null {
  return occupancy.firstFree(candidates, startMs, endMs);
}
