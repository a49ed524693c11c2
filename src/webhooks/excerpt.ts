// What Couvert keeps of an endpoint's answer to a delivery attempt: a bounded excerpt, safe to store
// and to show. At most EXCERPT_MAX_CHARS code points of the body (UTF-8; invalid bytes read as U+FFFD),
// control characters made visible (C0 as their Control Pictures ␀…␟ and ␡, C1 and the bidirectional
// overrides as \u{…}, so an answer cannot hide text or reorder what is shown; line feeds and tabs
// stay), and any echo of the request's signing secrets or signatures replaced by [redacted]. Bounded so
// that 30 days of every attempt of every endpoint stay small in the log and the read model whatever an
// endpoint answers (an endpoint may answer megabytes of HTML).

/** Code points kept of an answer's body. */
export const EXCERPT_MAX_CHARS = 512;

export interface Excerpt {
  text: string;
  /** The body was longer than the excerpt. */
  truncated: boolean;
}

const REDACTED = '[redacted]';

function visible(cp: number): string {
  if (cp === 0x0a || cp === 0x09) return String.fromCodePoint(cp);
  if (cp < 0x20) return String.fromCodePoint(0x2400 + cp);
  if (cp === 0x7f) return '\u2421';
  if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
    return `\\u{${cp.toString(16).toUpperCase()}}`;
  return String.fromCodePoint(cp);
}

/**
 * The excerpt of `body` (the bytes read of the answer, possibly already cut), or null for no body.
 * `secrets` are strings that must never be kept (signing secrets, the signatures sent): each is replaced
 * before the excerpt is cut, so no prefix of one survives the cut either.
 */
export function responseExcerpt(
  body: Uint8Array | string | null | undefined,
  secrets: readonly string[] = [],
  cutAlready = false,
): Excerpt | null {
  if (body === null || body === undefined || body.length === 0) return null;
  let text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  // Every one, however short: a bootstrap file's secret may be `whsec_` and one character.
  // Each replaced between the markers already written, never inside one (a value `act` must not
  // break an earlier `[redacted]`).
  for (const s of secrets)
    if (s.length > 0 && text.includes(s))
      text = text
        .split(REDACTED)
        .map((part) => part.split(s).join(REDACTED))
        .join(REDACTED);
  let out = '';
  let count = 0;
  let truncated = cutAlready;
  for (const ch of text) {
    if (count === EXCERPT_MAX_CHARS) {
      truncated = true;
      break;
    }
    out += visible(ch.codePointAt(0) as number);
    count++;
  }
  return { text: out, truncated };
}
