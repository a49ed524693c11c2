// A JSON body is UTF-8 (RFC 8259 §8.1). The parser (koa-body, through co-body) decodes every JSON body
// as UTF-8 whatever its Content-Type says, and replaces bytes that are not UTF-8 with U+FFFD: a
// Latin-1 "é" was stored as "�" behind a 2xx, the guest's name lost. So a JSON body that declares
// another charset is refused (415) before it is read, and one whose decoded text holds U+FFFD is
// checked against the bytes that arrived (400 when they are not UTF-8). The bytes are only kept
// references to the chunks the parser reads anyway, and only looked at when the text holds U+FFFD.
// A form body (the pages' forms, the OAuth endpoints) follows the same rules (but may declare another
// charset when every byte is ASCII), and its %-escapes too:
// the form parser (qs) keeps a value whose escapes are not UTF-8 as the escaped text itself, every
// escape of it ("Caf%E9", "50%25%zz" for "50%" and a broken "%zz"), so a manager's API key or endpoint
// description was stored as percent codes behind a 303.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { ApiError } from '../core/errors';
import { malformedEscapes } from './percent-escapes';

/** UTF-8, or US-ASCII, whose bytes are UTF-8 already (a byte past 127 is then checked as UTF-8). */
const UTF8 = /^(utf-?8|us-ascii|ascii)$/i;

const TEXT_BODIES = ['application/json', 'application/x-www-form-urlencoded'];

const foreignCharset = () =>
  new ApiError(415, 'VALIDATION_ERROR', 'Unsupported charset; send the body as UTF-8');

/**
 * 415 when a JSON body declares a charset other than UTF-8 (checked before anything is read). A form
 * that declares one (`charset=ISO-8859-1`, Apache HttpClient 4's default for its form entity, many
 * OAuth clients') is let through to be read: true, and `refuseNonAsciiForm` then refuses it unless
 * every byte is ASCII, which every such charset reads as UTF-8 does (its escapes are checked as UTF-8).
 */
export function refuseForeignCharset(ctx: Context): boolean {
  if (!ctx.is(TEXT_BODIES)) return false;
  const charset = ctx.request.charset;
  if (!charset || UTF8.test(charset)) return false;
  if (ctx.is('application/x-www-form-urlencoded')) return true;
  throw foreignCharset();
}

/**
 * 415 for a form declaring a charset other than UTF-8 whose body is not all ASCII. The parser decodes
 * it as UTF-8 whatever it declares, so a byte past 0x7F shows in the text as a character past U+007F
 * (decoded, or U+FFFD), compressed or not.
 */
export function refuseNonAsciiForm(text: unknown): void {
  if (typeof text === 'string' && /[\u0080-\uFFFF]/.test(text)) throw foreignCharset();
}

/**
 * Keeps the chunks of an uncompressed body as the parser reads them (attach before parsing: a
 * listener added in the same turn as the parser's sees every chunk). A compressed body's bytes are
 * not its text's, so none are kept (its replacement characters cannot be told from sent ones).
 */
export function keepBodyChunks(ctx: Context): Buffer[] | null {
  if (!ctx.is(TEXT_BODIES)) return null;
  const encoding = ctx.get('content-encoding');
  if (encoding && encoding.toLowerCase() !== 'identity') return null;
  const req: IncomingMessage = ctx.req;
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer) => chunks.push(chunk);
  req.on('data', onData);
  req.once('close', () => req.off('data', onData));
  req.once('end', () => req.off('data', onData));
  return chunks;
}

const strict = new TextDecoder('utf-8', { fatal: true });

/** 400 when the text the parser decoded holds U+FFFD that the bytes received do not spell. */
export function refuseReplacedBytes(text: unknown, chunks: Buffer[] | null): void {
  if (chunks === null) return;
  const bytes = typeof text === 'string' && text.includes('\uFFFD') ? Buffer.concat(chunks) : null;
  chunks.length = 0;
  if (bytes === null) return;
  try {
    strict.decode(bytes);
  } catch {
    throw new ApiError(400, 'VALIDATION_ERROR', 'The request body is not valid UTF-8', {
      issues: [{ path: '', code: 'invalid_encoding', message: 'The body must be UTF-8 text' }],
    });
  }
}

/**
 * 400 when a form body (`application/x-www-form-urlencoded`, as received) holds a %-escape that is
 * malformed (`%zz`, a lone `%`) or spells bytes that are not UTF-8 (`%E9`, a surrogate's `%ED%A0%80`):
 * the form parser would keep such a name or value as its escaped text, silently.
 */
export function refuseMalformedFormEscapes(text: unknown): void {
  if (typeof text !== 'string' || malformedEscapes(text).length === 0) return;
  throw new ApiError(400, 'VALIDATION_ERROR', 'The form body is not valid UTF-8', {
    issues: [
      {
        path: '',
        code: 'invalid_encoding',
        message:
          'The form holds a %-escape that is malformed or not UTF-8 (each % must start %XX, and the bytes must be UTF-8 text)',
      },
    ],
  });
}
