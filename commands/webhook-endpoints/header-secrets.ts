// Custom header values are secrets: partners set them to carry credentials for their receivers (an
// X-Api-Key). They are sealed like the signing secret (src/secrets.ts), one box per value, the names
// left in clear: events, read models and backups hold boxes, and a value is opened only to send a
// delivery. The API and the dashboard show names with REDACTED_HEADER_VALUE, and a save that sends it
// back for a header the endpoint has keeps that header's value (a GET's answer PATCHed back changes
// nothing). Events written before 2026-11-28 hold values in clear: they are read as they are (and
// redacted on every output, src/audit/changes.ts), until a save of the endpoint's headers (PATCH or the
// dashboard, `[redacted]` keeping each value) writes them sealed (docs/WEBHOOKS.md).

import { type Issue, validationError } from '../../src/core/errors';

/** What the API, the dashboard and the audit outputs show in place of a custom header's value. */
export const REDACTED_HEADER_VALUE = '[redacted]';

/** The sealed form (SecretBox: `v1.<iv 12 bytes>.<tag 16 bytes>.<ciphertext>`, base64url). */
const SEALED = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

export interface HeaderBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/** Whether every value is sealed (pure): false for headers an event before the sealing wrote in clear. */
export const headersSealed = (headers: Readonly<Record<string, string>>): boolean =>
  Object.values(headers).every((v) => SEALED.test(v));

export function sealHeaders(
  headers: Readonly<Record<string, string>>,
  box: HeaderBox,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = box.seal(value);
  return out;
}

/**
 * The values to send. A value not in the sealed form is one written in clear before the sealing, sent
 * as it is; a sealed one the key does not open throws, as the signing secret's does (a lost key).
 */
export function openHeaders(
  headers: Readonly<Record<string, string>>,
  box: Pick<HeaderBox, 'open'>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = SEALED.test(value) ? box.open(value) : value;
  return out;
}

/** Names with their values masked (pure): what the API and the dashboard show. */
export function maskedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) out[name] = REDACTED_HEADER_VALUE;
  return out;
}

/**
 * The headers a save sets (pure), `current` being the endpoint's values in clear: a value of
 * REDACTED_HEADER_VALUE keeps the value of the header of that name (case-insensitive) the endpoint
 * has; 400 when it has none (there is no value to keep, and `[redacted]` sent as a value would be a
 * mistake, never a credential).
 */
export function resolveKeptHeaders(
  next: Readonly<Record<string, string>>,
  current: Readonly<Record<string, string>>,
): Record<string, string> {
  const byLower = new Map(Object.entries(current).map(([n, v]) => [n.toLowerCase(), v]));
  const out: Record<string, string> = {};
  const issues: Issue[] = [];
  for (const [name, value] of Object.entries(next)) {
    if (value !== REDACTED_HEADER_VALUE) {
      out[name] = value;
      continue;
    }
    const kept = byLower.get(name.toLowerCase());
    if (kept === undefined)
      issues.push({
        path: `headers.${name}`,
        code: 'invalid_format',
        message: `${REDACTED_HEADER_VALUE} keeps the value of a header the endpoint has; this one has none: give its value`,
      });
    else out[name] = kept;
  }
  if (issues.length) throw validationError(issues);
  return out;
}

const ENDPOINT_EVENTS_WITH_HEADERS = new Set(['WebhookEndpointCreated', 'WebhookEndpointUpdated']);

/**
 * An endpoint event's data with the header values written in clear before the sealing masked (pure),
 * for outputs that keep events as stored (`audit export`): sealed values stay as their boxes, like the
 * signing secret's. The same object when there is nothing to mask.
 */
export function withClearHeadersMasked(type: string, data: Record<string, unknown>): Record<string, unknown> {
  if (!ENDPOINT_EVENTS_WITH_HEADERS.has(type)) return data;
  const mask = (h: unknown): unknown => {
    if (typeof h !== 'object' || h === null || Array.isArray(h)) return h;
    const entries = Object.entries(h as Record<string, unknown>);
    if (entries.every(([, v]) => typeof v === 'string' && SEALED.test(v))) return h;
    return Object.fromEntries(
      entries.map(([k, v]) => [k, typeof v === 'string' && SEALED.test(v) ? v : REDACTED_HEADER_VALUE]),
    );
  };
  const nested = (key: string): unknown => {
    const o = data[key];
    if (typeof o !== 'object' || o === null || !('headers' in o)) return o;
    const headers = mask((o as { headers: unknown }).headers);
    return headers === (o as { headers: unknown }).headers ? o : { ...o, headers };
  };
  const out = {
    ...data,
    headers: mask(data.headers),
    changes: nested('changes'),
    previous: nested('previous'),
  };
  const changed = (['headers', 'changes', 'previous'] as const).some((k) => out[k] !== data[k]);
  if (!changed) return data;
  for (const k of ['headers', 'changes', 'previous'] as const) if (!(k in data)) delete out[k];
  return out;
}
