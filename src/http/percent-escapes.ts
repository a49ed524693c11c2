import { unescape as unescapeQuery } from 'node:querystring';

/** A parameter of an `a=b&…` text whose name or value holds a malformed or not-UTF-8 %-escape. */
export interface MalformedEscape {
  /** The name as sent, still escaped. */
  raw: string;
  /** The name decoded leniently (`+` read as a space, a malformed escape kept as text). */
  name: string;
}

/**
 * The parameters of an `a=b&…` text (a query string, a form body) whose name or value holds a
 * %-escape that is malformed (`%zz`, a lone `%`) or spells bytes that are not UTF-8 (`%E9`, a
 * surrogate's `%ED%A0%80`), in the order sent, repeats included.
 */
export function malformedEscapes(text: string): MalformedEscape[] {
  const out: MalformedEscape[] = [];
  if (!text.includes('%')) return out;
  for (const part of text.split('&')) {
    if (!part.includes('%')) continue;
    const at = part.indexOf('=');
    const raw = at < 0 ? part : part.slice(0, at);
    try {
      decodeURIComponent(raw);
      if (at >= 0) decodeURIComponent(part.slice(at + 1));
    } catch {
      out.push({ raw, name: unescapeQuery(raw.replace(/\+/g, ' ')) });
    }
  }
  return out;
}
