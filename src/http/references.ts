// One rule for an id in a query or body that names nothing of the caller's restaurant: 422
// VALIDATION_ERROR, one `unknown_reference` issue per such field, and `details.reason` (UNKNOWN_SHIFT…)
// for clients that switch on a single code. Routes declare which fields are references; the server
// checks them after validating the input and before the handler runs, so every route answers alike.
// (An id in the path names the resource itself: not found there is 404.) Existence is read from the read
// models, which is sound for this question: a catalog item or customer removed between this check and
// the command is refused again by the command, which never trusts a read model for its invariants.

import { getCatalog } from '../../queries/catalog';
import { findCustomer } from '../../queries/customers';
import { ApiError, type Issue } from '../core/errors';
import type { Runtime } from '../runtime';

export type ReferenceKind = 'shift' | 'room' | 'table' | 'discount' | 'prescriber' | 'customer';

/** Dotted field path (in the query or the body) → what it names. An array field names one per item. */
export type References = Readonly<Record<string, ReferenceKind>>;

const REASON: Record<ReferenceKind, string> = {
  shift: 'UNKNOWN_SHIFT',
  room: 'UNKNOWN_ROOM',
  table: 'UNKNOWN_TABLE',
  discount: 'UNKNOWN_DISCOUNT',
  prescriber: 'UNKNOWN_PRESCRIBER',
  customer: 'CUSTOMER_NOT_FOUND',
};

const CATALOG_LIST = {
  shift: 'shifts',
  room: 'rooms',
  table: 'tables',
  discount: 'discounts',
  prescriber: 'prescribers',
} as const;

/** The value at a dotted path, or undefined when any step is missing or not an object. */
function at(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Every id a declaration points at in `input`, with the issue path it would be reported under. */
export function referencedIds(
  refs: References,
  input: unknown,
): { path: string; kind: ReferenceKind; id: string }[] {
  const out: { path: string; kind: ReferenceKind; id: string }[] = [];
  for (const [path, kind] of Object.entries(refs)) {
    const v = at(input, path);
    if (typeof v === 'string') out.push({ path, kind, id: v });
    else if (Array.isArray(v))
      v.forEach((item, i) => {
        if (typeof item === 'string') out.push({ path: `${path}.${i}`, kind, id: item });
      });
  }
  return out;
}

/** Throws 422 naming every referenced id the restaurant does not have; a no-op when all exist. */
export async function checkReferences(
  rt: Runtime,
  restaurantId: string,
  refs: References,
  input: unknown,
): Promise<void> {
  const ids = referencedIds(refs, input);
  if (ids.length === 0) return;
  const catalog = ids.some((r) => r.kind !== 'customer') ? await getCatalog(rt.docs, restaurantId) : null;
  const issues: Issue[] = [];
  let reason: string | null = null;
  for (const r of ids) {
    const exists =
      r.kind === 'customer'
        ? (await findCustomer(rt.docs, restaurantId, r.id)) !== null
        : ((catalog?.[CATALOG_LIST[r.kind]] ?? []) as readonly { id: string }[]).some((x) => x.id === r.id);
    if (exists) continue;
    reason ??= REASON[r.kind];
    issues.push({
      path: r.path,
      code: 'unknown_reference',
      message: `${r.path}: this restaurant has no ${r.kind} with id ${JSON.stringify(r.id)}`,
    });
  }
  if (issues.length)
    throw new ApiError(
      422,
      'VALIDATION_ERROR',
      issues.length === 1 ? (issues[0] as Issue).message : 'Some ids name nothing of this restaurant',
      { reason, issues },
    );
}
