// Tamper evidence: every event carries a SHA-256 hash chained to the previous event of its stream,
// computed by the adapter on append (docs/AUDIT.md says what it does and does not detect).
//
//   hash(r) = SHA-256("couvert-chain-v1" \n prev \n stream \n revision \n id \n type \n data \n metadata)
//
// prev is hash(r - 1), or GENESIS for revision 0. data and metadata are their JSON text as a
// reader gets them back (JSON.stringify of the parsed value reproduces the text written, so every
// store can recompute it). Positions and the recorded time are not covered: they are the store's,
// not the event's (EventStoreDB assigns both itself).
import { hash } from 'node:crypto';

export const CHAIN_VERSION = 'couvert-chain-v1';
/** The prev of revision 0. */
export const GENESIS = '0'.repeat(64);

export interface ChainInput {
  stream: string;
  revision: number;
  id: string;
  type: string;
  dataJson: string;
  metadataJson: string;
}

// crypto.hash (one shot, Node ≥ 20.12) costs ~1 µs on an event where createHash().update().digest()
// costs ~2.5 µs: it runs on every append and every event `audit verify` checks.
export function chainHash(prev: string, e: ChainInput): string {
  return hash(
    'sha256',
    `${CHAIN_VERSION}\n${prev}\n${JSON.stringify(e.stream)}\n${e.revision}\n${e.id}\n${JSON.stringify(e.type)}\n${e.dataJson}\n${e.metadataJson}`,
    'hex',
  );
}

/** The hash of an event as read back (data and metadata re-serialised). */
export function hashOfRecorded(
  prev: string,
  e: { stream: string; revision: number; id: string; type: string; data: unknown; metadata: unknown },
): string {
  return chainHash(prev, {
    stream: e.stream,
    revision: e.revision,
    id: e.id,
    type: e.type,
    dataJson: JSON.stringify(e.data),
    metadataJson: JSON.stringify(e.metadata),
  });
}

/**
 * The chain tip after `events` (a stream read forwards from revision 0): each event's stored hash,
 * or for an event written before the chain existed (no hash) the hash recomputed from its content.
 */
export function tipOf(
  events: readonly {
    stream: string;
    revision: number;
    id: string;
    type: string;
    data: unknown;
    metadata: unknown;
    hash?: string;
  }[],
): string {
  let prev = GENESIS;
  for (const e of events) prev = e.hash ?? hashOfRecorded(prev, e);
  return prev;
}
