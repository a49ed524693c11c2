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

/**
 * DESIGN.md §3: the scopes of the privileged options of POST and PATCH /reservations (past the
 * availability, in a given status, without approval or deposit). `--scopes ALL` grants them too,
 * which whoever types it should be told.
 */
export const PRIVILEGED_SCOPES: readonly Scope[] = [
  'RESERVATIONS_FORCE_INSERT',
  'RESERVATIONS_FORCE_CONFIRM',
];

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

/**
 * Scopes that do nothing without another. Spec §5: CUSTOMERS_WRITE also requires CUSTOMERS_READ (the
 * customer write routes ask for both). DESIGN.md §3: RESERVATIONS_FORCE_INSERT and
 * RESERVATIONS_FORCE_CONFIRM are the privileged options of POST and PATCH /reservations, routes that
 * need RESERVATIONS_WRITE, so without it they do nothing. Where a person chooses scopes (the
 * dashboard's key form, the consent an application asks for) such a choice is refused, saying which
 * is missing, rather than granting a credential whose described ability it does not have; nothing is
 * added silently. RESERVATIONS_READ_SENSITIVE is not here: it shows contact fields in whatever
 * reservation the credential reads, which RESERVATIONS_WRITE's and RESERVATIONS_CANCEL's answers are
 * too, so it has no one companion (and the spec names none).
 */
export const SCOPE_NEEDS: Partial<Record<Scope, Scope>> = {
  RESERVATIONS_FORCE_INSERT: 'RESERVATIONS_WRITE',
  RESERVATIONS_FORCE_CONFIRM: 'RESERVATIONS_WRITE',
  CUSTOMERS_WRITE: 'CUSTOMERS_READ',
};

/** Each chosen scope whose companion is not chosen, with that companion. */
export function scopesWithoutCompanion(scopes: readonly string[]): { scope: Scope; needs: Scope }[] {
  const set = new Set(scopes);
  return canonicalScopes(scopes).flatMap((scope) => {
    const needs = SCOPE_NEEDS[scope];
    return needs && !set.has(needs) ? [{ scope, needs }] : [];
  });
}
