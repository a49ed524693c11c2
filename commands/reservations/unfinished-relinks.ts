// Which deleted customers left reservations that never recorded it (a crash between the deletion's
// customer events and its relinks): read from one pass over the log (`audit erase --pending`), so the
// relinks are run again only for those. Only a deletion marked `relinks` (written by the code that
// relinks, since 2026-11-28) owes them: one made before never recorded any, and recording them now
// would announce every past deletion, past reservations included, with today's time.
import { CUSTOMER_RELINKED } from './events';

interface Seen {
  /** The customer id the reservation links (created with, or last given by a PATCH). */
  link: string | null;
  /** What it shows per the relinks recorded since (decide-relink.ts shownPerRelinks). */
  shows: string | null | undefined;
}

export class UnfinishedRelinks {
  private readonly byStream = new Map<string, Seen>();
  /** The customers whose deletion was written by code that relinks (marked `relinks`). */
  private readonly relinking = new Set<string>();

  /** Folds one event of the log, in order. */
  see(e: { stream: string; type: string; data: Record<string, unknown> }): void {
    if (e.type === 'CustomerDeleted') {
      if (e.data.relinks === true && typeof e.data.customer_id === 'string')
        this.relinking.add(e.data.customer_id);
      return;
    }
    if (e.type === 'ReservationCreated') {
      const r = e.data.reservation as { customer_id?: unknown } | undefined;
      const link = typeof r?.customer_id === 'string' ? r.customer_id : null;
      this.byStream.set(e.stream, { link, shows: undefined });
      return;
    }
    const seen = this.byStream.get(e.stream);
    if (!seen) return;
    const changes = e.data.changes as { customer_id?: unknown } | undefined;
    if (e.type === CUSTOMER_RELINKED)
      seen.shows = typeof changes?.customer_id === 'string' ? changes.customer_id : null;
    else if (e.type === 'ReservationUpdated' && changes !== undefined && 'customer_id' in changes) {
      seen.link = typeof changes.customer_id === 'string' ? changes.customer_id : null;
      seen.shows = undefined;
    }
  }

  /**
   * The deleted customers some reservation still shows: its link resolves (through `mergedInto`) to
   * one whose deletion is marked `relinks` and no relink says it shows nobody.
   */
  customers(mergedInto: ReadonlyMap<string, string>): Set<string> {
    const out = new Set<string>();
    for (const { link, shows } of this.byStream.values()) {
      if (link === null || shows === null) continue;
      const id = shownAs(link, mergedInto);
      if (this.relinking.has(id)) out.add(id);
    }
    return out;
  }

  /**
   * Whether the deletion `id`'s reservations show (`id`, or the customer it was merged into, at any
   * depth) owes them a relink: marked `relinks`. A customer merged into one deleted before relinks were
   * recorded, deleted now with it, changes nothing they show: recording it would announce that old
   * deletion with today's time.
   */
  owes(id: string, mergedInto: ReadonlyMap<string, string>): boolean {
    return this.relinking.has(shownAs(id, mergedInto));
  }
}

/** The customer a link to `id` shows: the one it was merged into, at any depth. */
function shownAs(id: string, mergedInto: ReadonlyMap<string, string>): string {
  let shown = id;
  // Merges never form a cycle (merge-slot.ts); the bound only guards a hand-edited log.
  for (let hops = 0, next = mergedInto.get(shown); next !== undefined && hops < 1000; hops++) {
    shown = next;
    next = mergedInto.get(shown);
  }
  return shown;
}
