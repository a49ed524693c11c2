// Node's parser keeps the first of a repeated Authorization header and drops the others (as it does
// for the other single-valued headers it knows), so `ctx.get('authorization')` never shows a second
// one: the raw header lines do. A credential given twice is refused rather than read as one of them,
// as anything else given twice is (README, "One answer per kind of mistake").

/** How many of the request's header lines carry `name` (lower case), from `req.rawHeaders`. */
export function headerLineCount(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  // rawHeaders alternates names and values, names as sent (any case).
  for (let i = 0; i < rawHeaders.length; i += 2)
    if (rawHeaders[i]?.length === name.length && rawHeaders[i]?.toLowerCase() === name) n++;
  return n;
}

/** The sentence of both refusals (the partner API's 401, the OAuth endpoints' invalid_request). */
export const AUTHORIZATION_TWICE =
  'The Authorization header is given more than once: send it once (a repeated one is never read as either value)';
