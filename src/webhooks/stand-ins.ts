// A body describing two customers (src/webhooks/payloads.ts, PublishedEvent.others) is stored beside
// a stand-in with the other customers' data erased. What an endpoint answers to it is kept (an
// excerpt, src/webhooks/excerpt.ts) sealed with the body's own customer's key only: the values the
// body holds of the others are redacted from it like a secret, so an answer echoing them keeps
// nothing of theirs readable after their erasure.

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The shortest value of the other customers' redacted from an answer (characters). */
export const MIN_REDACTED_CHARS = 3;

const hex4 = (code: number) => code.toString(16).padStart(4, '0');

/**
 * How a value reads in an answer echoing the body: as written, inside a JSON string (the raw body), and
 * as common JSON encoders write it again when they re-encode a parsed body (Python's json.dumps and
 * PHP's json_encode by default: non-ASCII as \u escapes, lower-case hex or upper; PHP's also `/` as `\/`).
 */
function echoForms(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const ascii = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${hex4(c.charCodeAt(0))}`);
  const upper = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${hex4(c.charCodeAt(0)).toUpperCase()}`);
  const forms = new Set([value, json, ascii, upper]);
  for (const f of [...forms]) if (f.includes('/')) forms.add(f.replaceAll('/', '\\/'));
  return [...forms];
}

/**
 * The strings of `body` that its stand-in does not hold at the same place (the other customers' data),
 * each as written, as it reads inside a JSON string (an echo of the raw body) and as an encoder re-encoding
 * the body writes it (echoForms); longest first, so
 * a value is redacted before a part of it; values shorter than MIN_REDACTED_CHARS are left out.
 * Empty when either is not JSON (pure).
 */
export function othersData(body: string, standIn: string | undefined): string[] {
  if (standIn === undefined || standIn === body) return [];
  let full: unknown;
  let kept: unknown;
  try {
    full = JSON.parse(body);
    kept = JSON.parse(standIn);
  } catch {
    return [];
  }
  const out = new Set<string>();
  const walk = (a: unknown, b: unknown) => {
    if (typeof a === 'string') {
      // A value of one or two characters ("1", "fr", "no") is skipped: redacting it everywhere would
      // wipe unrelated text of the answer (and the earlier markers), and it says next to nothing.
      if (a !== b && [...a].length >= MIN_REDACTED_CHARS) for (const form of echoForms(a)) out.add(form);
      return;
    }
    if (Array.isArray(a)) {
      for (let i = 0; i < a.length; i++) walk(a[i], Array.isArray(b) ? b[i] : undefined);
      return;
    }
    if (isObject(a)) for (const [k, v] of Object.entries(a)) walk(v, isObject(b) ? b[k] : undefined);
  };
  walk(full, kept);
  return [...out].sort((x, y) => y.length - x.length);
}
