import { type Collection, type Doc, DuplicateKeyError, type Update } from '../ports/document-store';
import { positionToString } from '../ports/event-store';

/**
 * Applies an update to one document unless that document already saw this log position. Documents
 * keep `_pos` (the zero-padded position of the last event applied), so a redelivered event is a no-op
 * even for $inc and $push.
 */
export async function applyOnce<T extends Doc>(
  collection: Collection<T>,
  id: string,
  position: bigint,
  update: Update,
  options: { upsert?: boolean } = {},
): Promise<boolean> {
  const pos = positionToString(position);
  const guarded: Update = { ...update, $set: { ...(update.$set ?? {}), _pos: pos } };
  try {
    const result = await collection.updateOne(
      { _id: id, $or: [{ _pos: { $lt: pos } }, { _pos: { $exists: false } }] },
      guarded,
      options,
    );
    return result.modified > 0 || result.upsertedId !== null;
  } catch (err) {
    // The upsert tried to insert because the guard excluded an existing document: already applied.
    if (options.upsert && err instanceof DuplicateKeyError && err.index.includes('_id')) return false;
    throw err;
  }
}
