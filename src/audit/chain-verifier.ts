// Checks the tamper-evidence chain (src/adapters/event-store/chain.ts) over a log read in order,
// one event at a time, keeping only each stream's tip: a million events need no more than the
// number of streams in memory. Pure: the caller feeds events and reads the findings.
import { chainHash, GENESIS, hashOfRecorded } from '../adapters/event-store/chain';
import type { RecordedEvent } from '../ports/event-store';

export type ChainFindingKind =
  /** The stored hash is not the hash of this event over the previous one. */
  | 'hash_mismatch'
  /** Revisions are missing before this event (events removed from the stream). */
  | 'missing_revisions'
  /**
   * An event without a hash after chained events of its stream, or in a log that hashed every event
   * (a hash stripped or an event inserted).
   */
  | 'unchained_event'
  /** Global positions are missing before this event (gap-free stores only: events removed from the log). */
  | 'missing_positions';

export interface ChainFinding {
  kind: ChainFindingKind;
  stream: string;
  revision: number;
  position: string;
  message: string;
}

interface Tip {
  prev: string;
  next: number;
  chained: boolean;
}

type ChainEventMeta = Pick<RecordedEvent, 'stream' | 'revision' | 'position' | 'hash'>;

/** An event's chained fields as the store holds them (ChainVerifier.addStored). */
export interface StoredChainEvent extends ChainEventMeta {
  id: string;
  type: string;
  dataJson: string;
  metadataJson: string;
}

export interface ChainSummary {
  events: number;
  streams: number;
  /** Events carrying a hash that checked out. */
  chained: number;
  /** Events written before the chain (no hash), covered only by the first chained event after them. */
  unchained: number;
  findings: ChainFinding[];
}

export class ChainVerifier {
  private readonly tips = new Map<string, Tip>();
  private lastPosition: bigint | null = null;
  private lastEvent: ChainEventMeta | null = null;
  private readonly summary: ChainSummary = { events: 0, streams: 0, chained: 0, unchained: 0, findings: [] };

  /**
   * @param gapFreePositions the store numbers its log 1, 2, 3… without gaps (SQLite, memory), so a
   * missing position is a removed event; EventStoreDB positions are byte offsets, not checked.
   * @param firstPosition with gapFreePositions, the position the read started after (null: the start).
   * @param everyEventHashed the store hashed every event it holds (a SQLite log at schema 3 on): an
   * event without a hash is not one written before the chain but one whose hash was removed (with its
   * content edited, maybe: a stream's only event would otherwise go unnoticed) or one appended by a
   * process still running code from before the chain; reported as `unchained_event`.
   */
  constructor(
    private readonly gapFreePositions: boolean,
    firstPosition: bigint | null = null,
    private readonly everyEventHashed = false,
  ) {
    this.lastPosition = firstPosition ?? (gapFreePositions ? 0n : null);
  }

  private find(kind: ChainFindingKind, e: ChainEventMeta, message: string): void {
    this.summary.findings.push({
      kind,
      stream: e.stream,
      revision: e.revision,
      position: e.position.toString(),
      message,
    });
  }

  add(e: RecordedEvent): void {
    this.visit(e, (prev) => hashOfRecorded(prev, e));
  }

  /**
   * An event as stored (data and metadata as their stored JSON text): hashed as is, without the
   * parse and re-serialisation `add` needs (the SQLite fast path of `audit verify`). Stricter than
   * `add`: text edited into other JSON of equal value (spacing, key order) is reported too.
   */
  addStored(e: StoredChainEvent): void {
    this.visit(e, (prev) => chainHash(prev, e));
  }

  private visit(e: ChainEventMeta, hashOver: (prev: string) => string): void {
    this.summary.events++;
    if (this.gapFreePositions && this.lastPosition !== null && e.position !== this.lastPosition + 1n) {
      const from = this.lastPosition + 1n;
      this.find(
        'missing_positions',
        e,
        e.position > from
          ? `positions ${from}–${e.position - 1n} are missing from the log before this event (events removed)`
          : `position ${e.position} comes after ${this.lastPosition} (the log is out of order)`,
      );
    }
    this.lastPosition = e.position;
    this.lastEvent = e;
    let tip = this.tips.get(e.stream);
    if (tip === undefined) {
      tip = { prev: GENESIS, next: 0, chained: false };
      this.tips.set(e.stream, tip);
      this.summary.streams++;
    }
    if (e.revision < tip.next) {
      // An earlier revision after a later one (rows moved in the log): reported here, and the tip is
      // left at the later revision, so the revisions after it still check against it (instead of a
      // "missing" revision that was only seen earlier, or a hash mismatch that is not one).
      if (e.hash === undefined && !this.everyEventHashed) this.summary.unchained++;
      this.find(
        'missing_revisions',
        e,
        `revision ${e.revision} comes after revision ${tip.next - 1} (events reordered)`,
      );
      return;
    }
    let linkKnown = true;
    if (e.revision > tip.next) {
      linkKnown = false;
      this.find(
        'missing_revisions',
        e,
        `revision${e.revision - tip.next > 1 ? `s ${tip.next}–${e.revision - 1} are` : ` ${tip.next} is`} missing before revision ${e.revision} (events removed from the stream, or moved later in the log)`,
      );
    }
    const computed = hashOver(tip.prev);
    if (e.hash === undefined) {
      if (!this.everyEventHashed) this.summary.unchained++;
      if (tip.chained)
        this.find(
          'unchained_event',
          e,
          `revision ${e.revision} has no hash although earlier events of the stream do (a hash removed, or an event inserted)`,
        );
      else if (this.everyEventHashed)
        this.find(
          'unchained_event',
          e,
          `revision ${e.revision} has no hash although the log hashed every event (a hash removed, its content perhaps edited, or an event appended by a process running code from before the chain)`,
        );
      tip.prev = computed;
    } else {
      tip.chained = true;
      // After missing revisions the link is already reported, and the event's hash cannot be checked
      // (it is computed over the missing one's): not counted as chained and intact either.
      if (linkKnown && e.hash !== computed)
        this.find(
          'hash_mismatch',
          e,
          `revision ${e.revision}'s stored hash does not match its content: it was edited (or ${e.revision === 0 ? '' : `revision ${e.revision - 1} was edited and its hash recomputed, or `}two events were swapped)`,
        );
      else if (linkKnown) this.summary.chained++;
      tip.prev = e.hash;
    }
    tip.next = e.revision + 1;
  }

  /**
   * @param lastPositionIssued with gapFreePositions, the highest position the store ever gave an event,
   * read before the first event was added (SQLite keeps it when rows are deleted): positions above
   * the last event added are events removed from the end of the log, reported at that last event.
   */
  finish(lastPositionIssued?: bigint | null): ChainSummary {
    const last = this.lastPosition ?? 0n;
    if (this.gapFreePositions && lastPositionIssued != null && lastPositionIssued > last)
      this.find(
        'missing_positions',
        this.lastEvent ?? { stream: '', revision: 0, position: 0n, hash: undefined },
        `positions ${last + 1n}–${lastPositionIssued} are missing from the end of the log, after this event (events removed)`,
      );
    return this.summary;
  }
}

/** Verifies a whole log (or stream) at once. */
export function verifyChain(events: Iterable<RecordedEvent>, gapFreePositions = false): ChainSummary {
  const v = new ChainVerifier(gapFreePositions);
  for (const e of events) v.add(e);
  return v.finish();
}
