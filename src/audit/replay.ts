// Replays the log into scratch read models (audit as-of, audit verify) and compares read models.
import type { DocumentStore } from '../ports/document-store';
import type { EventStore } from '../ports/event-store';
import type { Projection } from '../projection/projection';
import { WriteBackStore } from '../projection/write-back';
import { type AsOf, isAtOrBefore } from './history';

const BATCH = 1000;

export interface ReplayResult {
  /** Events read (every type). */
  events: number;
  /** Position of the last event replayed, or null for none. */
  position: bigint | null;
}

/**
 * Applies the log, from the start up to `until` (inclusive; a time stops at the first event
 * recorded after it, in log order), to `projections` on `docs`, then sets their checkpoints.
 */
export async function replayInto(
  events: EventStore,
  docs: DocumentStore,
  projections: readonly Projection[],
  until: AsOf | null,
  onProgress?: (events: number, position: bigint) => void,
  /** Per projection, the last position it may apply (audit verify: each live checkpoint). */
  limits?: ReadonlyMap<string, bigint | null>,
): Promise<ReplayResult> {
  const byType = new Map<string, Projection[]>();
  for (const p of projections) {
    await p.setup?.(docs);
    for (const t of p.eventTypes) byType.set(t, [...(byType.get(t) ?? []), p]);
  }
  let count = 0;
  let position: bigint | null = null;
  // Scratch stores are embedded: batches go through the runner's write-back cache, flushed every
  // BATCH events (src/projection/write-back.ts).
  const cache = docs.kind === 'embedded' ? new WriteBackStore(docs) : null;
  const target = cache ?? docs;
  const flush = async () => {
    if (cache === null) return;
    await cache.flush();
    cache.clear();
  };
  for await (const e of events.readAll({ batchSize: BATCH })) {
    if (until !== null && !isAtOrBefore(e, until)) break;
    const handlers = byType.get(e.type);
    if (handlers !== undefined)
      for (const p of handlers) {
        if (limits !== undefined) {
          const limit = limits.get(p.name) ?? null;
          if (limit === null || e.position > limit) continue;
        }
        await p.apply(e, target);
      }
    count++;
    position = e.position;
    if (count % BATCH === 0) await flush();
    if (onProgress !== undefined && count % 5000 === 0) onProgress(count, e.position);
  }
  await flush();
  if (position !== null)
    for (const p of projections) {
      const limit = limits === undefined ? position : (limits.get(p.name) ?? null);
      if (limit !== null) await docs.setCheckpoint(p.name, limit < position ? limit : position);
    }
  if (onProgress !== undefined && position !== null) onProgress(count, position);
  return { events: count, position };
}

export interface ReadModelDifference {
  collection: string;
  _id: string;
  kind: 'missing_in_live' | 'extra_in_live' | 'different';
  /** For `different`: dotted paths whose values differ (at most 10). */
  fields?: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Dotted paths where a and b differ (key order ignored). */
export function differingPaths(a: unknown, b: unknown, path = '', out: string[] = [], max = 10): string[] {
  if (out.length >= max) return out;
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      // An absent field and an undefined one are the same document.
      if (a[k] === undefined && b[k] === undefined) continue;
      differingPaths(a[k], b[k], path ? `${path}.${k}` : k, out, max);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path || '(root)'} (length ${a.length} ≠ ${b.length})`);
    else for (let i = 0; i < a.length; i++) differingPaths(a[i], b[i], `${path}[${i}]`, out, max);
    return out;
  }
  if (a instanceof Date && b instanceof Date ? a.getTime() !== b.getTime() : a !== b)
    out.push(path || '(root)');
  return out;
}

/**
 * Every document of each named collection in `expected` (a replay) against `live`: missing,
 * extra and different documents, by _id. `pastRetention` names, per collection, the documents the
 * service may already have removed from its live read model (a delivery history kept 30 days): those
 * are left out on both sides.
 */
export async function compareReadModels(
  expected: DocumentStore,
  live: DocumentStore,
  collections: readonly string[],
  pastRetention: Readonly<Record<string, (doc: Record<string, unknown>) => boolean>> = {},
): Promise<{ documents: number; differences: ReadModelDifference[] }> {
  const differences: ReadModelDifference[] = [];
  let documents = 0;
  for (const name of collections) {
    const gone = Object.hasOwn(pastRetention, name) ? pastRetention[name] : undefined;
    const kept = (docs: Record<string, unknown>[]) =>
      (gone === undefined ? docs : docs.filter((d) => !gone(d))).map((d) => [d._id as string, d] as const);
    const want = new Map(kept(await expected.collection(name).find({})));
    const have = new Map(kept(await live.collection(name).find({})));
    documents += want.size;
    for (const [id, doc] of want) {
      const other = have.get(id);
      if (other === undefined) differences.push({ collection: name, _id: id, kind: 'missing_in_live' });
      else {
        const fields = differingPaths(doc, other);
        if (fields.length > 0) differences.push({ collection: name, _id: id, kind: 'different', fields });
      }
    }
    for (const id of have.keys())
      if (!want.has(id)) differences.push({ collection: name, _id: id, kind: 'extra_in_live' });
  }
  return { documents, differences };
}
