// The endpoint page's link to older deliveries (`?before=<created_at>|<delivery id>`, the last one
// shown): read back into the list's cursor, or null when the link's value is not one the page wrote
// (a typo, a cut link), which the page then says rather than listing from the newest as if asked to.

/** The cursor the page writes for the last delivery it shows. */
export const deliveryCursor = (d: { created_at: string; _id: string }): string => `${d.created_at}|${d._id}`;

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?Z$/;
// Any delivery id the service writes: newId's and the publisher's (lowercase letters and digits) and
// the demo seeder's, which carry a restaurant id (an operator's choice) and a date. Only `|`, the
// cursor's separator, is never in one.
const DELIVERY_ID = /^whd_[^|]{1,200}$/;

/** `before` as the list's cursor, or null when the page never writes such a value. */
export function readDeliveryCursor(before: string): { created_at: string; id: string } | null {
  const i = before.lastIndexOf('|');
  if (i <= 0) return null;
  const created_at = before.slice(0, i);
  const id = before.slice(i + 1);
  if (!INSTANT.test(created_at) || Number.isNaN(Date.parse(created_at)) || !DELIVERY_ID.test(id)) return null;
  return { created_at, id };
}
