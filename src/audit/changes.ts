// A readable diff of what one event changed, derived from the event alone (events carry their
// changes and previous values, or a whole snapshot on creation).

export interface FieldChange {
  /** Dotted path of the field (custom_fields.cf_vip.value). */
  field: string;
  /** The value before; absent when the event does not say (creations, additions). */
  from?: unknown;
  to?: unknown;
}

/** Fields every event carries that say nothing about the change. */
const BASE_FIELDS = new Set(['restaurant_id', 'at']);
/** On a creation, the snapshot object whose fields are the new values (the first one present). */
const SNAPSHOT_FIELDS = ['reservation', 'profile', 'key', 'endpoint', 'grant', 'application', 'restaurant'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The fields an event changed. `subjectId` (the entity's own id) is left out where it appears as
 * a field, as are the restaurant id and the event time.
 */
export function changesOf(
  event: { type: string; data: Record<string, unknown> },
  subjectId?: string,
): FieldChange[] {
  return whoFirst(fieldsChanged(event, subjectId)).map((c) => {
    if (!SECRET_FIELDS.has(c.field) && !MASKED_FIELDS.has(c.field) && !hasSecret(c.from) && !hasSecret(c.to))
      return c;
    const out: FieldChange = { field: c.field };
    if ('from' in c) out.from = redactField(c.field, c.from);
    if ('to' in c) out.to = redactField(c.field, c.to);
    return out;
  });
}

/**
 * Fields whose value must not leave the log through an auditor's history and as-of views: a manager's
 * password hash (a password can be guessed against it offline), and the hashes of API keys, OAuth
 * client secrets and authorization codes (unsalted SHA-256: a weak secret chosen in a bootstrap file
 * could be found from its hash), and webhook endpoints' signing secrets (sealed with the secrets key:
 * an auditor has no use for the box, and one copied out of the log is a secret away from whoever
 * later holds that key). That one was set or changed is still shown. `audit export` keeps the log's
 * events whole.
 */
const SECRET_FIELDS = new Set([
  'password_hash',
  'token_hash',
  'secret_hash',
  'code_hash',
  'secret',
  'previous_secret',
]);
/**
 * Objects whose names are shown and whose values are secrets: a webhook endpoint's custom headers
 * (partners carry their receivers' credentials in them: commands/webhook-endpoints/header-secrets.ts),
 * sealed since 2026-11-28 and in clear in events written before, redacted either way.
 */
const MASKED_FIELDS = new Set(['headers']);
const redacted = (v: unknown) => (v === null || v === undefined ? v : '[redacted]');
const masked = (v: unknown) =>
  isObject(v) ? Object.fromEntries(Object.keys(v).map((k) => [k, redacted(v[k])])) : redacted(v);
const redactField = (field: string, v: unknown) =>
  SECRET_FIELDS.has(field) ? redacted(v) : MASKED_FIELDS.has(field) ? masked(v) : withoutSecrets(v);
const hasSecret = (v: unknown): boolean =>
  Array.isArray(v)
    ? v.some(hasSecret)
    : isObject(v) &&
      Object.entries(v).some(([k, x]) => SECRET_FIELDS.has(k) || MASKED_FIELDS.has(k) || hasSecret(x));

/** A deep copy with every secret field's value redacted (audit as-of's folded state). */
export function withoutSecrets(value: unknown): unknown {
  if (!hasSecret(value)) return value;
  if (Array.isArray(value)) return value.map(withoutSecrets);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = redactField(k, v);
  return out;
}

/**
 * Who the change is about reads first: a sealed event's personal fields are put back after the
 * others when it is opened (src/privacy/seal.ts), so a customer's creation would otherwise end with
 * their name. The rest keeps the event's order.
 */
const FIRST = ['name', 'email', 'phone_number'];
function whoFirst(changes: FieldChange[]): FieldChange[] {
  const first = FIRST.flatMap((f) => changes.filter((c) => c.field === f));
  if (first.length === 0) return changes;
  return [...first, ...changes.filter((c) => !FIRST.includes(c.field))];
}

function fieldsChanged(
  event: { type: string; data: Record<string, unknown> },
  subjectId?: string,
): FieldChange[] {
  const data = event.data;
  const skip = (key: string, value: unknown) =>
    BASE_FIELDS.has(key) || (subjectId !== undefined && value === subjectId && key.endsWith('_id'));
  if (isObject(data.changes)) {
    const previous = isObject(data.previous) ? data.previous : {};
    // A value restated as it was (a reservation's guest text taken along to its new customer,
    // commands/reservations/decide-update.ts) is no change. Only a change of customer restates: in any
    // other event equal values are a change whose values were erased since (a customer erased: both
    // read null), which still happened and is listed, its values erased. A change of customer written
    // since 2026-11-28 names the fields it restates (`restated`): only those are left out, so a text the
    // same PATCH set, erased since with the new customer, is still listed. One written before says
    // nothing: every field it holds equal on both sides is taken as restated.
    const named = Array.isArray(data.restated) ? new Set(data.restated) : null;
    const restates = typeof data.changes.customer_id === 'string';
    const out: FieldChange[] = Object.entries(data.changes)
      .filter(([field, to]) =>
        named !== null
          ? !named.has(field)
          : !(restates && field in previous && JSON.stringify(previous[field]) === JSON.stringify(to)),
      )
      .map(([field, to]) => (field in previous ? { field, from: previous[field], to } : { field, to }));
    for (const [key, value] of Object.entries(data))
      if (key !== 'changes' && key !== 'previous' && key !== 'restated' && !skip(key, value))
        out.push({ field: key, to: value });
    return out;
  }
  if ('from' in data && 'to' in data) {
    const out: FieldChange[] = [{ field: 'status', from: data.from, to: data.to }];
    for (const [key, value] of Object.entries(data))
      if (key !== 'from' && key !== 'to' && !skip(key, value)) out.push({ field: key, to: value });
    return out;
  }
  const snapshot = SNAPSHOT_FIELDS.find((f) => isObject(data[f]));
  const out: FieldChange[] = [];
  if (snapshot !== undefined && /Created$/.test(event.type)) {
    for (const [field, to] of Object.entries(data[snapshot] as Record<string, unknown>))
      if (!skip(field, to)) out.push({ field, to });
    for (const [key, value] of Object.entries(data))
      if (key !== snapshot && !skip(key, value)) out.push({ field: key, to: value });
    return out;
  }
  for (const [key, value] of Object.entries(data)) if (!skip(key, value)) out.push({ field: key, to: value });
  return out;
}

/**
 * Characters a terminal acts on instead of showing: C0/C1 controls (a line break, an escape
 * sequence), the line and paragraph separators, and the bidirectional overrides and isolates.
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A value of the log made safe for one line of an auditor's terminal: a name or message a partner
 * sent with a line break (or an escape sequence) would otherwise print what looks like another
 * change or another event. Such characters are written as `\u000a`; the rest stays as it is.
 */
export const printable = (text: string): string =>
  text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const short = (v: unknown): string => {
  if (v === undefined) return '∅';
  const text = printable(typeof v === 'string' ? v : JSON.stringify(v));
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
};

/** One line per change: `status: CONFIRMED → SEATED`, `party_size = 4`. */
export function describeChanges(changes: readonly FieldChange[]): string[] {
  return changes.map((c) =>
    'from' in c
      ? `${printable(c.field)}: ${short(c.from)} → ${short(c.to)}`
      : `${printable(c.field)} = ${short(c.to)}`,
  );
}

/** Field names that hold a customer's contact details, at any depth. */
export const CONTACT_FIELDS = new Set(['email', 'phone_number', 'phone', 'phone_numbers', 'emails']);

/** A deep copy with every contact field removed (partners without RESERVATIONS_READ_SENSITIVE). */
export function withoutContact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutContact);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!CONTACT_FIELDS.has(k)) out[k] = withoutContact(v);
  return out;
}

/** Changes without contact fields: a change of one is dropped, nested ones are stripped. */
export function changesWithoutContact(changes: readonly FieldChange[]): FieldChange[] {
  const out: FieldChange[] = [];
  for (const c of changes) {
    const leaf = c.field.split('.').at(-1)!;
    if (CONTACT_FIELDS.has(leaf)) continue;
    const next: FieldChange = { field: c.field };
    if ('from' in c) next.from = withoutContact(c.from);
    if ('to' in c) next.to = withoutContact(c.to);
    out.push(next);
  }
  return out;
}
