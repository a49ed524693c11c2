// A read-only, raw view of an embedded event log, for tools that copy the log rather than use its
// events (`audit export`, src/audit/export.ts). It opens its own read-only connection to the log's
// file — WAL lets it read beside the live writer without blocking it — memory-maps the file (reads
// then copy no page through SQLite's cache: about half the CPU of a row read on a 1M-event log), and
// hands back the stored columns as they are: data and metadata as their stored JSON text, never
// parsed. Rows are read in position ranges (the primary key), so a page costs what it holds.
import Database from 'better-sqlite3';
import type { RecordedEvent } from '../../ports/event-store';

/** A stored row, in this order: the columns of the events table. */
export type StoredRow = [
  position: number,
  id: string,
  stream: string,
  revision: number,
  type: string,
  data: string,
  metadata: string,
  created: string,
  hash: string | null,
];

/** A JSON object: what every event's data and metadata are (null, an array or a number is not). */
export const isJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The error for a row whose data or metadata is not a JSON object (the file edited by hand, or damaged): it names
 * the row, where JSON.parse's own message ("Expected property name…") said nothing of which one, and
 * points at the check that reads the stored text without parsing it.
 */
/** An event whose stored text no reader can take (the log edited or damaged): see unreadableRow. */
export class UnreadableEventError extends Error {}

export function unreadableRow(position: number | bigint, stream: string, revision: number): Error {
  return new UnreadableEventError(
    `the event at position ${position} (${stream} revision ${revision}) does not hold valid JSON (its data and metadata must be JSON objects): the log was edited or damaged (npm run cli -- audit verify --no-read-models checks every stream's hash chain)`,
  );
}

/** The event a stored row holds (data and metadata parsed). */
export function storedRowToEvent(row: StoredRow): RecordedEvent {
  let data: Record<string, unknown>;
  let metadata: RecordedEvent['metadata'];
  try {
    data = JSON.parse(row[5]);
    metadata = JSON.parse(row[6]);
  } catch {
    throw unreadableRow(row[0], row[2], row[3]);
  }
  if (!isJsonObject(data) || !isJsonObject(metadata)) throw unreadableRow(row[0], row[2], row[3]);
  const event: RecordedEvent = {
    id: row[1],
    type: row[4],
    data,
    metadata,
    created: row[7],
    stream: row[2],
    revision: row[3],
    position: BigInt(row[0]),
  };
  if (row[8] !== null) event.hash = row[8];
  return event;
}

export interface StoredRowFilter {
  /**
   * Text every wanted row holds in its metadata or its data (e.g. a JSON-quoted restaurant id): a
   * cheap pre-filter run inside SQLite, so rows that cannot match never become JS strings. The
   * caller still checks the rows it gets.
   */
  contains: string | null;
  /** Inclusive bounds on the recorded time (ISO strings compare in time order). */
  from: string | null;
  to: string | null;
}

const MMAP_BYTES = 1 << 30;

/** The stream names starting with `prefix`: lo <= name < hi (a range of the stream index). */
const prefixRange = (prefix: string) => ({
  lo: prefix,
  hi: prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1),
});

export class SqliteLogReader {
  private readonly db: Database.Database;
  private readonly page: Database.Statement<unknown[], StoredRow>;

  private constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      this.db.pragma(`mmap_size = ${MMAP_BYTES}`);
      this.page = this.db
        .prepare<unknown[], StoredRow>(
          `SELECT position, id, stream, revision, type, data, metadata, created, hash
           FROM events
           WHERE position > @after AND position <= @upTo
             AND (@contains IS NULL OR instr(metadata, @contains) > 0 OR instr(data, @contains) > 0)
             AND (@from IS NULL OR created >= @from) AND (@to IS NULL OR created <= @to)
           ORDER BY position`,
        )
        .raw();
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  /** A reader of the log file at `file`, or null for a log that has no file (`:memory:`). */
  static open(file: string): SqliteLogReader | null {
    if (file === '' || file === ':memory:') return null;
    return new SqliteLogReader(file);
  }

  /**
   * A reader of pages joined inside SQLite: for the rows with after < position <= upTo that pass
   * the filter and `where` (an SQL condition over the columns, with `@named` parameters), in log
   * order, the bytes of `expression` (an SQL text expression over the columns and the `computed`
   * ones: name → SQL expression, evaluated once a row) one after another, and how many rows they
   * hold. Only for trusted SQL written in the code, never from input.
   */
  concatenated(
    expression: string,
    where = 'TRUE',
    computed: Record<string, string> = {},
    /**
     * An SQL condition every row should meet (over the columns and the computed ones): the page also
     * answers the first position of a row that does not (`firstBad`, null when none), for the caller
     * to look at before it uses the bytes.
     */
    check = 'TRUE',
  ): (
    after: number,
    upTo: number,
    filter: StoredRowFilter,
    params?: Record<string, unknown>,
  ) => { bytes: Buffer | null; rows: number; firstBad: number | null } {
    const extra = Object.entries(computed)
      .map(([name, sql]) => `, ${sql} AS ${name}`)
      .join('');
    // The ORDER BY in a subquery the aggregate reads as a co-routine costs nothing (the primary key's
    // order); an ORDER BY inside group_concat would sort every page in a temporary b-tree.
    const statement = this.db
      .prepare<unknown[], [Buffer | null, number, number | null]>(
        `SELECT CAST(group_concat(${expression}, '') AS BLOB), count(*),
           min(CASE WHEN ${check} THEN NULL ELSE position END) FROM (
           SELECT position, id, stream, revision, type, data, metadata, created, hash${extra}
           FROM events
           WHERE position > @after AND position <= @upTo
             AND (@contains IS NULL OR instr(metadata, @contains) > 0 OR instr(data, @contains) > 0)
             AND (@from IS NULL OR created >= @from) AND (@to IS NULL OR created <= @to)
             AND (${where})
           ORDER BY position)`,
      )
      .raw();
    return (after, upTo, filter, params = {}) => {
      const [bytes, rows, firstBad] = statement.get({
        ...params,
        after,
        upTo,
        contains: filter.contains,
        from: filter.from,
        to: filter.to,
      }) as [Buffer | null, number, number | null];
      return { bytes, rows, firstBad };
    };
  }

  /**
   * The streams named `<prefix>…` (read through the stream index, never the whole log) holding both a
   * row with position <= upTo that passes the filter's bounds and `where` (trusted SQL, as in
   * concatenated) and a row that does not meet `where`: a restaurant's streams that others' events
   * share (a manager's).
   */
  sharedStreams(
    prefixes: readonly string[],
    where: string,
    upTo: number,
    filter: StoredRowFilter,
    params: Record<string, unknown> = {},
  ): string[] {
    const mine = `(json_valid(metadata) AND json_valid(data) AND coalesce((${where}), FALSE))`;
    const statement = this.db
      .prepare<unknown[], string>(
        `SELECT stream FROM events
         WHERE stream >= @lo AND stream < @hi AND position <= @upTo
         GROUP BY stream
         HAVING max(${mine} AND (@from IS NULL OR created >= @from) AND (@to IS NULL OR created <= @to))
           AND min(${mine}) = 0`,
      )
      .pluck();
    return prefixes.flatMap((prefix) =>
      statement.all({ ...params, ...prefixRange(prefix), upTo, from: filter.from, to: filter.to }),
    );
  }

  /** A deterministic SQL function of text arguments for this reader's statements (see concatenated). */
  defineFunction(name: string, fn: (...args: string[]) => string | null): void {
    this.db.function(name, { deterministic: true }, fn as (...args: unknown[]) => string | null);
  }

  /**
   * The stored data of the rows of this type in the streams named `<prefix>…`, in log order: read
   * through the (stream, revision) index, so only those streams are visited, not the whole log.
   */
  dataOfType(type: string, streamPrefix: string): string[] {
    const { lo, hi } = prefixRange(streamPrefix);
    return this.db
      .prepare<[string, string, string], string>(
        'SELECT data FROM events WHERE stream >= ? AND stream < ? AND type = ? ORDER BY position',
      )
      .pluck()
      .all(lo, hi, type);
  }

  /** The rows with after < position <= upTo that pass the filter, in log order. */
  rows(after: number, upTo: number, filter: StoredRowFilter): StoredRow[] {
    return this.page.all({ after, upTo, contains: filter.contains, from: filter.from, to: filter.to });
  }

  close(): void {
    this.db.close();
  }
}
