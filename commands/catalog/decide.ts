// The catalog of one restaurant: fold its events, and decide what a new configuration changes.
import { type Issue, validationError } from '../../src/core/errors';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { normalizeSection } from './items';
import { CATALOG_KINDS, type Catalog, type CatalogKind, type CatalogLists, emptyCatalog } from './types';

type AnyItem = CatalogLists[CatalogKind][number];

/** Immutable: each event makes new lists, so a catalog handed out earlier never changes under its reader. */
export function evolveCatalog(state: Catalog, event: Pick<RecordedEvent, 'type' | 'data'>): Catalog {
  const d = event.data as { kind: CatalogKind; item?: AnyItem; id?: string };
  if (!CATALOG_KINDS.includes(d.kind)) return state;
  const list = state[d.kind] as AnyItem[];
  switch (event.type) {
    case 'CatalogItemConfigured': {
      const item = d.item as AnyItem;
      const at = list.findIndex((x) => x.id === item.id);
      const next = at < 0 ? [...list, item] : list.map((x, i) => (i === at ? item : x));
      return { ...state, [d.kind]: next };
    }
    case 'CatalogItemRemoved':
      return { ...state, [d.kind]: list.filter((x) => x.id !== d.id) };
    default:
      return state;
  }
}

export const initialCatalog = emptyCatalog;

/** A configuration: any subset of the sections, each a list of raw items (bootstrap, CLI file). */
export type CatalogConfig = Partial<Record<CatalogKind, readonly unknown[]>>;

/**
 * replace: a section given is the whole list (items missing from it are removed; sections not given
 * are untouched). merge: items given are added or replaced, nothing is removed. An item given replaces
 * the stored one whole (a field it omits takes its default, never the stored value: `catalog apply`'s
 * help and the README say so).
 */
export type ApplyMode = 'replace' | 'merge';

/** JSON with sorted keys: equal items compare equal whatever order their properties were stored in. */
export function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/**
 * Validates the configuration (each item, then references across the resulting catalog) and returns
 * one event per item that differs: applying the same configuration twice appends nothing.
 */
export function decideApplyCatalog(
  state: Catalog,
  restaurantId: string,
  config: CatalogConfig,
  mode: ApplyMode,
  at: string,
): NewEvent[] {
  const issues: Issue[] = [];
  const given: Partial<CatalogLists> = {};
  // Kinds with an item too malformed to read: references to them are not checked (they would only
  // repeat the same fault as "unknown").
  const unreadable = new Set<CatalogKind>();
  for (const kind of CATALOG_KINDS) {
    const raw = config[kind];
    if (raw === undefined) continue;
    const items = normalizeSection(kind, raw, issues);
    if (items.length < raw.length) unreadable.add(kind);
    (given as Record<string, unknown>)[kind] = items;
  }

  const removed: { kind: CatalogKind; id: string }[] = [];
  const configured: { kind: CatalogKind; item: AnyItem }[] = [];
  const next: Catalog = { ...state };
  for (const kind of CATALOG_KINDS) {
    const items = given[kind] as AnyItem[] | undefined;
    if (!items) continue;
    const current = state[kind] as AnyItem[];
    const byId = new Map(current.map((x) => [x.id, x]));
    const ids = new Set(items.map((x) => x.id));
    if (mode === 'replace') for (const x of current) if (!ids.has(x.id)) removed.push({ kind, id: x.id });
    for (const item of items) {
      const old = byId.get(item.id);
      if (!old || stableJson(old) !== stableJson(item)) configured.push({ kind, item });
    }
    const kept = mode === 'replace' ? [] : current.filter((x) => !ids.has(x.id));
    (next as unknown as Record<string, AnyItem[]>)[kind] = [...kept, ...items];
  }
  issues.push(...checkReferences(next, given, unreadable));
  if (issues.length) throw validationError(issues, 'The catalog configuration is invalid');
  return [
    ...removed.map(({ kind, id }) => ({
      type: 'CatalogItemRemoved',
      data: { restaurant_id: restaurantId, kind, id, at },
    })),
    ...configured.map(({ kind, item }) => ({
      type: 'CatalogItemConfigured',
      data: { restaurant_id: restaurantId, kind, item, at } as Record<string, unknown>,
    })),
  ];
}

/** Rules across items, on the catalog as it would be; paths point into the configuration given. */
function checkReferences(next: Catalog, given: Partial<CatalogLists>, unreadable: Set<CatalogKind>): Issue[] {
  const issues: Issue[] = [];
  if (unreadable.has('rooms') || unreadable.has('tables')) return issues;
  const rooms = new Set(next.rooms.map((r) => r.id));
  const pathOf = (kind: CatalogKind, id: string, field: string) => {
    const i = (given[kind] as { id: string }[] | undefined)?.findIndex((x) => x.id === id) ?? -1;
    return i >= 0 ? `${kind}.${i}.${field}` : kind;
  };
  for (const t of next.tables)
    if (t.room_id !== null && !rooms.has(t.room_id))
      issues.push({
        path: pathOf('tables', t.id, 'room_id'),
        code: 'unknown_reference',
        message: `table ${t.id} is in room ${t.room_id}, which is not a room of the catalog`,
      });
  for (const s of next.shifts)
    if (s.requires_room_selection && !next.tables.some((t) => t.room_id !== null))
      issues.push({
        path: pathOf('shifts', s.id, 'requires_room_selection'),
        code: 'invalid_value',
        message: `shift ${s.id} requires room selection, but no table is in a room`,
      });
  return issues;
}
