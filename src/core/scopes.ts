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

/** CUSTOMERS_WRITE is useless without CUSTOMERS_READ (spec §5): granting one grants both. */
export function normalizeScopes(scopes: readonly string[]): Scope[] {
  const set = new Set(scopes.filter(isScope));
  if (set.has('CUSTOMERS_WRITE')) set.add('CUSTOMERS_READ');
  return SCOPES.filter((s) => set.has(s));
}
