// Refusals recorded before 2026-11-27 (sixth pass) kept WhatsApp's own error text in clear:
// `MessageFailed.error` was "HTTP <status>: <Graph's message> (<Graph's details>)", free text that may
// echo the recipient's number or the message sent (docs/MISSED-CALLS.md, "Personal data"). The adapter
// now keeps only a summary (refusalSummary in src/adapters/message-sender/whatsapp-cloud.ts: the HTTP
// status and Graph's codes, worded by provider-error-summary.ts, as here). The log is append-only, so such events stay as stored; every reader that
// goes through the sealing layer (the write side's fold, the read models on a replay or rebuild,
// `audit history`/`as-of`) gets the error as the current code writes it: "HTTP <status>", and
// "WhatsApp error <code>" when the event kept the code. `audit export` shows the event as stored.
import type { RecordedEvent } from '../../src/ports/event-store';
import { providerErrorSummary } from './provider-error-summary';

/** "HTTP 400: …" or "HTTP 400 (…)": the old adapter's text with Graph's words after the status. */
const OLD_TEXT = /^HTTP (\d{3})[:( ]/;

/** What an old refusal's error reads as (the text itself when it is not the old adapter's). */
export function summarisedProviderError(error: string, code: unknown): string {
  const m = OLD_TEXT.exec(error);
  if (m === null) return error;
  const known = typeof code === 'string' && /^-?\d{1,12}$/.test(code);
  return providerErrorSummary({ status: m[1] as string, code: known ? code : undefined });
}

/** The event itself (the same object) unless it is a MessageFailed holding the provider's text. */
export function upcastProviderError(event: RecordedEvent): RecordedEvent {
  if (event.type !== 'MessageFailed') return event;
  const error = event.data.error;
  if (typeof error !== 'string') return event;
  const fixed = summarisedProviderError(error, event.data.code);
  if (fixed === error) return event;
  // Key by key (CONTRIBUTING: no spread copy that then changes).
  const data: Record<string, unknown> = {};
  for (const k of Object.keys(event.data)) data[k] = k === 'error' ? fixed : event.data[k];
  return { ...event, data };
}
