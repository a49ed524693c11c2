// The one home of the wording of a provider's refusal as the log keeps it (`MessageFailed.error`, in
// clear): "HTTP <status>", then "WhatsApp error <code>", "subcode <n>", "type <t>", "fbtrace_id <id>"
// for what is known, comma separated. Written by the WhatsApp adapter (refusalSummary in
// src/adapters/message-sender/whatsapp-cloud.ts) and by the reading of old refusals
// (legacy-provider-errors.ts): both through this function, so the two cannot drift. Never Graph's
// free text (docs/MISSED-CALLS.md, "Personal data"). Pure.

/** What is kept of a refusal, each part already checked to have the shape Graph gives it. */
export interface ProviderErrorParts {
  status: number | string;
  code?: number | string;
  subcode?: number;
  type?: string;
  fbtrace_id?: string;
}

export function providerErrorSummary(p: ProviderErrorParts): string {
  const parts = [`HTTP ${p.status}`];
  if (p.code !== undefined) parts.push(`WhatsApp error ${p.code}`);
  if (p.subcode !== undefined) parts.push(`subcode ${p.subcode}`);
  if (p.type !== undefined) parts.push(`type ${p.type}`);
  if (p.fbtrace_id !== undefined) parts.push(`fbtrace_id ${p.fbtrace_id}`);
  return parts.join(', ');
}
