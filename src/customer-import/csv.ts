// Reading an uploaded customer file: UTF-8 (with or without a byte-order mark), CRLF, LF or CR (mixed
// too), quoted
// fields (RFC 4180, through csv-parse), a header row. The delimiter is the comma, or the semicolon or
// tab when the header row uses one of those instead (spreadsheets in many locales export ";").
// Parsing yields to the event loop every few thousand records, so a large file read inside the server
// never holds requests back.
import { CsvError, parse } from 'csv-parse';

/** A file that cannot be read as a CSV table at all (as opposed to rows with faulty values). */
export class CsvFileError extends Error {
  override name = 'CsvFileError';
  constructor(
    readonly code: 'not_utf8' | 'empty' | 'unparsable' | 'too_many_rows' | 'too_large',
    message: string,
  ) {
    super(message);
  }
}

export interface CsvTable {
  delimiter: ',' | ';' | '\t';
  header: string[];
  /** Data rows in file order; rows[0] is row 1 (the line after the header when no field spans lines). */
  rows: string[][];
}

export const CSV_LIMITS = {
  /** Data rows in one file. */
  rows: 500_000,
  /** Bytes in one file. */
  bytes: 200 * 1024 * 1024,
  /** Characters in one record (a 10,000-character note in 4-byte characters fits). */
  record: 1_000_000,
} as const;

// Text fed to the parser at a time, and records between yields: a large file is parsed in stretches of
// a millisecond or two, so the requests served beside an import's upload are not held for long.
const CHUNK = 16 * 1024;
const YIELD_EVERY = 200;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The delimiter the header row uses: the most frequent of , ; and tab outside quotes (comma on ties). */
export function detectDelimiter(text: string): CsvTable['delimiter'] {
  const counts = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '\n' || c === '\r')) break;
    else if (!quoted && c in counts) counts[c as keyof typeof counts]++;
  }
  if (counts[';'] > counts[','] && counts[';'] >= counts['\t']) return ';';
  if (counts['\t'] > counts[','] && counts['\t'] > counts[';']) return '\t';
  return ',';
}

/** Bytes decoded between two yields to the event loop (~1–3 ms of work). */
const DECODE_STEP = 1024 * 1024;

/**
 * Decodes strict UTF-8 (a BOM is dropped); any invalid byte refuses the whole file. A megabyte at a
 * time with a yield between, answered as those parts (the text is their concatenation): a 15 MB file
 * decoded in one call, or its parts joined into one string, held the event loop 20–60 ms.
 */
export async function decodeUtf8(bytes: Uint8Array): Promise<string[]> {
  if (bytes.byteLength > CSV_LIMITS.bytes)
    throw new CsvFileError('too_large', `the file is larger than ${CSV_LIMITS.bytes / 1024 / 1024} MB`);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const parts: string[] = [];
  try {
    for (let at = 0; at < bytes.byteLength; at += DECODE_STEP) {
      if (at > 0) await yieldToLoop();
      const end = Math.min(bytes.byteLength, at + DECODE_STEP);
      // A character cut by the step's edge is held by the decoder until the next step.
      parts.push(decoder.decode(bytes.subarray(at, end), { stream: end < bytes.byteLength }));
    }
  } catch {
    throw new CsvFileError('not_utf8', 'the file is not UTF-8 text: save it as "CSV UTF-8" and try again');
  }
  // UTF-16 without a byte order mark decodes as UTF-8 with a NUL beside every ASCII letter: its header
  // was refused as "n\0a\0m\0e\0" not being a customer field. No text file holds NUL.
  if (parts.some((p) => p.includes('\u0000')))
    throw new CsvFileError(
      'not_utf8',
      'the file holds NUL bytes, so it is not UTF-8 text (it may be saved as UTF-16, "Unicode text"): save it as "CSV UTF-8" and try again',
    );
  return parts;
}

/**
 * Parses a whole file: its header and data rows. Empty lines are skipped. `checkHeader` sees the header
 * row as soon as it is parsed, before any data row: what it throws stops the reading and is thrown.
 */
export async function readCsv(
  bytes: Uint8Array,
  checkHeader: (header: string[]) => void = () => undefined,
): Promise<CsvTable> {
  const parts = await decodeUtf8(bytes);
  if (parts.every((p) => p.trim() === ''))
    throw new CsvFileError('empty', 'the file is empty: it needs a header row');
  // The header row: the parts up to the first line break (a header is not longer than a record).
  let head = '';
  for (const p of parts) {
    head += p;
    if (/[\r\n]/.test(p)) break;
  }
  const delimiter = detectDelimiter(head);
  const parser = parse({
    delimiter,
    bom: true,
    // Any line ending ends a row, mixed in one file (files pasted together, edited on two systems);
    // csv-parse otherwise keeps the first line's ending and reads a lone LF after CRLF as text.
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: CSV_LIMITS.record,
  });
  const records: string[][] = [];
  const done = (async () => {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (records.length === 0) checkHeader(record);
      records.push(record);
      if (records.length > CSV_LIMITS.rows + 1) {
        parser.destroy();
        throw new CsvFileError('too_many_rows', `the file has more than ${CSV_LIMITS.rows} rows`);
      }
      if (records.length % YIELD_EVERY === 0) await yieldToLoop();
    }
  })();
  // The reader may stop early (a refused header, too many rows): its failure is awaited below, and the
  // writer stops feeding a parser that was destroyed.
  done.catch(() => undefined);
  try {
    let fed = 0;
    feed: for (const text of parts)
      for (let i = 0; i < text.length; i += CHUNK) {
        if (parser.destroyed) break feed;
        if (fed++ > 0) await yieldToLoop();
        if (!parser.write(text.slice(i, i + CHUNK)))
          await new Promise<void>((resolve) => {
            const go = () => {
              parser.off('drain', go);
              parser.off('close', go);
              resolve();
            };
            parser.on('drain', go);
            parser.on('close', go);
          });
      }
    parser.end();
    await done;
  } catch (err) {
    parser.destroy();
    await done.catch(() => undefined);
    throw toFileError(err);
  }
  const [header, ...rows] = records;
  if (!header) throw new CsvFileError('empty', 'the file is empty: it needs a header row');
  return { delimiter, header, rows };
}

function toFileError(err: unknown): Error {
  if (err instanceof CsvFileError) return err;
  const csv = err as Partial<CsvError> & { lines?: number };
  // Most of csv-parse's codes start with CSV_, not all (INVALID_OPENING_QUOTE): its class says it.
  if (err instanceof CsvError || (typeof csv.code === 'string' && csv.code.startsWith('CSV_')))
    return new CsvFileError(
      'unparsable',
      `the file is not valid CSV near line ${csv.lines ?? '?'}: ${describeCsvError(String(csv.code))}`,
    );
  return err as Error;
}

function describeCsvError(code: string): string {
  switch (code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is never closed';
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return 'a quote inside a field is not doubled ("")';
    case 'INVALID_OPENING_QUOTE':
      return 'a quote inside a field that does not start with one (put the field in quotes and double its quotes: "Jo ""JJ"" Smith")';
    case 'CSV_MAX_RECORD_SIZE':
      return `a row is longer than ${CSV_LIMITS.record} characters`;
    default:
      return code.toLowerCase().replace(/^csv_/, '').replaceAll('_', ' ');
  }
}
