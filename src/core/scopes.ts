// Scopes of the spec (§5) plus the three DESIGN.md §3 adds.
export const SCOPES = [
  'CATALOG_READ',
  'AVAILABILITY_READ',
  'RESERVATIONS_READ',
  'RESERVATIONS_READ_SENSITIVE',
  'RESERVATIONS_WRITE',
  'RESERVATIONS_CANCEL',
  'RESERVATIONS_FORCE_INSERT',
  'RESERVATIONS_FORCE_CONFIRM',
  'CUSTOMERS_READ',
  'CUSTOMERS_WRITE',
  'WEBHOOKS_WRITE',
  'MISSED_CALLS_WRITE',
] as const;
export type Scope = (typeof SCOPES)[number];

export const isScope = (v: string): v is Scope => (SCOPES as readonly string[]).includes(v);

/**
 * The scopes given, deduplicated, in canonical order, and never widened: a credential holds exactly what
 * it was granted. CUSTOMERS_WRITE alone is useless (customer writes also need CUSTOMERS_READ, spec §4),
 * but adding READ silently would grant reads nobody consented to; the routes ask for both instead.
 */
export function canonicalScopes(scopes: readonly string[]): Scope[] {
  const set = new Set(scopes.filter(isScope));
  return SCOPES.filter((s) => set.has(s));
}
