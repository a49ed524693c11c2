// Webhook fan-outs written before a body describing two customers was sealed with both their keys
// (docs/AUDIT.md, "a reservation given to another customer"): a reservation moved from customer A to
// B was fanned out with A's profile as the previous value (`previous_attributes.customer`) in bodies
// sealed with B's key alone. The log keeps those rows as they were written (rewriting them would
// re-chain every fan-out stream); the read rule here, applied by the sealing layer on every read path
// (the publisher's retries and resends, the audit tools), shows A's reference erased once A is.
// A fan-out this code writes for a reservation always names its other customers
// (`other_customer_ids`, `[]` for none): only those without are looked at.
// The same for a move's ReservationUpdated written before: its `previous` text (the previous
// customer's) was sealed in the new customer's box; it reads erased once the previous customer is
// (uncheckedMove, below; the sealing layer erases the paths seal.ts otherSubjects gives).

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Whether stored (sealed) fan-out data was written before this rule's change: sealed for a customer,
 * describing a reservation's change (the only bodies with a previous customer), and naming no other
 * customers. Cheap: clear fields only, no body is read.
 */
export function isUncheckedFanout(data: Record<string, unknown>): boolean {
  if (typeof data.customer_id !== 'string' || 'other_customer_ids' in data) return false;
  const types = data.event_types;
  if (!isObject(types)) return false;
  for (const t of Object.values(types))
    if (t === 'reservation.updated' || t === 'reservation.canceled') return true;
  return false;
}

/** The previous customer a v1 body names in `previous_attributes.customer`, if any. */
function previousCustomer(body: unknown): Record<string, unknown> | null {
  const c =
    isObject(body) && isObject(body.data) && isObject(body.data.previous_attributes)
      ? body.data.previous_attributes.customer
      : undefined;
  return isObject(c) && typeof c.id === 'string' ? c : null;
}

/**
 * Whether a body may name a previous customer, without parsing it: `"customer":{` after its
 * `"previous_attributes":{` (a v1 body ends with them; JSON.stringify writes no spaces, and a quote
 * inside a string value is escaped, so a body naming one always matches). Most old
 * reservation.updated bodies change something else (a party size, a status): they pay one scan.
 */
export function mayNamePreviousCustomer(body: unknown): body is string {
  if (typeof body !== 'string') return false;
  const at = body.indexOf('"previous_attributes":{');
  return at !== -1 && body.indexOf('"customer":{', at) !== -1;
}

/** The customers other than `own` the bodies name as the reservation's previous customer (pure). */
export function previousCustomers(payloads: unknown, own: string): string[] {
  if (!isObject(payloads)) return [];
  const out = new Set<string>();
  for (const body of Object.values(payloads)) {
    if (!mayNamePreviousCustomer(body)) continue;
    try {
      const c = previousCustomer(JSON.parse(body));
      if (c !== null && c.id !== own) out.add(c.id as string);
    } catch {
      // Not JSON (a test's body): nothing of anyone in it that this rule knows.
    }
  }
  return [...out];
}

/**
 * The bodies with the references to `erased` customers in `previous_attributes.customer` read as an
 * erased customer's (name `[erased]`, contact details null, as src/webhooks/payloads.ts writes a stand-in);
 * the rest of each body as it was (pure).
 */
export function erasePreviousCustomers(
  payloads: Record<string, unknown>,
  erased: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [variant, body] of Object.entries(payloads)) {
    out[variant] = body;
    if (!mayNamePreviousCustomer(body)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      continue;
    }
    const c = previousCustomer(parsed);
    if (c === null || !erased.has(c.id as string)) continue;
    c.name = '[erased]';
    if ('email' in c) c.email = null;
    if ('phone_number' in c) c.phone_number = null;
    out[variant] = JSON.stringify(parsed);
  }
  return out;
}

/**
 * The previous customer of a stored (sealed) ReservationUpdated that gave the reservation to another
 * customer, written before such an event sealed the previous text with the previous customer's key
 * (no `sealed.more`, the previous text in the new customer's box), else null. Clear fields only.
 */
export function uncheckedMove(type: string, data: Record<string, unknown>): string | null {
  if (type !== 'ReservationUpdated') return null;
  const sealed = data.sealed;
  const previous = data.previous;
  if (!isObject(sealed) || !isObject(previous) || 'more' in sealed) return null;
  const was = previous.customer_id;
  if (typeof was !== 'string' || was === sealed.customer_id) return null;
  const paths = sealed.paths;
  return Array.isArray(paths) && paths.some((p) => typeof p === 'string' && p.startsWith('previous.'))
    ? was
    : null;
}
