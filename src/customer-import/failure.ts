// What an import job that stopped on an exception keeps, logs and shows. Three readers, three texts:
//
// - the manager (the job page): one fixed sentence from the page (src/web/pages/import-pages.ts) —
//   what happened, what is imported, what to do, the job id to quote — never the exception's words
//   (internal details: file paths, SQL, a library's wording);
// - operators (`customers import-status`, the history read model): the job's stored reason,
//   `failureReason` below — the kind of error, its code and its message, scrubbed, and where the
//   full detail is. The reason is stored in the job's stream, which is permanent, unsealed and
//   exported (audit export): it must hold no personal data, so it is scrubbed as the log line is;
// - the server log (`failureForLog`): the same scrubbed message with the error's name, code and stack
//   frames, next to the job, restaurant and request ids.
//
// Scrubbing: a message of this code names no customer, but an exception's message may quote its input
// (V8's JSON.parse quotes what it read; a driver may quote a value): double-quoted and back-quoted
// text, anything shaped like an email address and any run of six or more digits (a phone number, with
// its spaces, dots or dashes) are replaced. Single-quoted text is kept: V8 and Node put code names and
// file paths there ('reading \'x\'', ENOENT's path), which operators need.
import { ApiError } from '../core/errors';

const REASON_MAX = 300;

const DOUBLE_QUOTED = /"(?:[^"\\]|\\.)*"|`[^`]*`|“[^”]*”/g;
const EMAIL = /[^\s'"`<>()[\],;:]+@[^\s'"`<>()[\],;:]+/g;
const DIGITS = /\+?\d(?:[\s.\-()]*\d){5,}/g;

/** An exception's message with what could be someone's data replaced (see above). */
export function scrubMessage(message: string): string {
  return message.replace(DOUBLE_QUOTED, '"…"').replace(EMAIL, '<email>').replace(DIGITS, '<number>');
}

const codeOf = (err: unknown): string | null => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(code) ? code : null;
};

/**
 * The reason stored on the job (CustomerImportFailed.reason): for operators, never shown to the
 * manager. `processed`: the rows recorded before it stopped.
 */
export function failureReason(err: unknown, processed: number): string {
  const name = err instanceof Error ? err.name : typeof err;
  const code = codeOf(err);
  const raw = err instanceof Error ? err.message : String(err);
  const message = scrubMessage(raw).replace(/\s+/g, ' ').trim();
  const kind =
    err instanceof ApiError
      ? `${err.status} ${err.code}`
      : `internal error (${name}${code && !message.startsWith(code) ? ` ${code}` : ''})`;
  const text = `${kind} after row ${processed}: ${message || 'no message'}; the server log has the detail`;
  return text.length > REASON_MAX ? `${text.slice(0, REASON_MAX - 1)}…` : text;
}

/** The error as the server log takes it: name, code, scrubbed message and stack frames (no message). */
export function failureForLog(err: unknown): {
  name: string;
  code: string | null;
  message: string;
  stack?: string;
} {
  if (!(err instanceof Error)) return { name: typeof err, code: null, message: scrubMessage(String(err)) };
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .join('\n');
  return {
    name: err.name,
    code: codeOf(err),
    message: scrubMessage(err.message),
    stack: frames || undefined,
  };
}
