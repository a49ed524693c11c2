// At-least-once delivery with crashes part-way through an event, for projection property tests:
// a document store whose writes fail after a budget, and a delivery loop that redelivers from a
// checkpoint at or before the failed event (as the runner does after a crash).
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import type { DocumentStore } from '../../src/ports/document-store';
import type { RecordedEvent } from '../../src/ports/event-store';

export class Crash extends Error {}

/** A document store whose writes fail once `budget.left` writes have been made (a crash mid-event). */
export function crashing(inner: DocumentStore, budget: { left: number }): DocumentStore {
  return {
    ...inner,
    kind: inner.kind,
    collection(name) {
      const c = inner.collection(name);
      return new Proxy(c, {
        get(target, prop, receiver) {
          const v = Reflect.get(target, prop, receiver);
          if (typeof v !== 'function') return v;
          if (['replaceOne', 'updateOne', 'insertOne', 'updateMany', 'deleteOne'].includes(String(prop)))
            return (...args: unknown[]) => {
              if (budget.left-- <= 0) throw new Crash('crash');
              return v.apply(target, args);
            };
          return v.bind(target);
        },
      }) as typeof c;
    },
  } as DocumentStore;
}

/**
 * Applies `events` in order, crashing as `crashes` say ([at event, after N writes, redeliver from]:
 * fast-check's `fc.tuple(fc.nat(40), fc.nat(6), fc.nat(10))`), then redelivers the whole log once
 * more (which must change nothing). Returns the store the projection wrote.
 */
export async function deliverWithCrashes(
  apply: (event: RecordedEvent, docs: DocumentStore) => Promise<void>,
  events: readonly RecordedEvent[],
  crashes: readonly (readonly [number, number, number])[],
): Promise<EmbeddedDocumentStore> {
  const inner = new EmbeddedDocumentStore();
  const budget = { left: Number.POSITIVE_INFINITY };
  const docs = crashing(inner, budget);
  let next = 0;
  let checkpoint = 0; // events before this index are known applied
  const pending = [...crashes];
  while (next < events.length) {
    const plan = pending[0];
    if (plan && plan[0] % (events.length + 1) === next) {
      pending.shift();
      budget.left = plan[1];
    }
    try {
      await apply(events[next] as RecordedEvent, docs);
      next++;
    } catch (err) {
      if (!(err instanceof Crash)) throw err;
      budget.left = Number.POSITIVE_INFINITY;
      // Redeliver from a checkpoint at or before the failed event.
      next = Math.max(0, Math.min(next, checkpoint + ((plan?.[2] ?? 0) % (next - checkpoint + 1))));
      checkpoint = next;
    }
    if (next % 5 === 0) checkpoint = next;
  }
  for (const e of events) await apply(e, inner); // a whole redelivery changes nothing
  return inner;
}
