// Auditors' commands (docs/AUDIT.md): history, as-of, export, verify. They read the log; none
// writes a read model the service uses (as-of and verify replay into scratch stores).
import { once } from 'node:events';
import { createWriteStream, fstatSync, rmSync, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import {
  deleteCustomer,
  deleteMergedAway,
  loadCustomer,
  relinkDeletion,
  relinkMergedAway,
  withMergedInto,
} from '../../commands/customers/handler';
import { addRelinks, type RelinkOutcome, relinkLeftover } from '../../commands/reservations/relink';
import { UnfinishedRelinks } from '../../commands/reservations/unfinished-relinks';
import { restaurantStream } from '../../commands/restaurants/events';
import { allProjections, allProjectionVersions } from '../../projections/index';
import { WEBHOOK_DELIVERIES } from '../../projections/webhook-deliveries';
import { EmbeddedDocumentStore } from '../adapters/document-store/embedded';
import { SqliteEventStore } from '../adapters/event-store/sqlite';
import { UnreadableEventError } from '../adapters/event-store/sqlite-log-reader';
import { type ChainSummary, ChainVerifier } from '../audit/chain-verifier';
import { withoutSecrets } from '../audit/changes';
import { type ExportFilter, exportEvents } from '../audit/export';
import {
  type AsOf,
  foldSubject,
  hashMismatches,
  historyEntry,
  historyText,
  instantBound,
  loadSubject,
  parseAsOf,
} from '../audit/history';
import { compareReadModels, type ReadModelDifference, replayInto } from '../audit/replay';
import { type Clock, systemClock } from '../core/clock';
import { operatorMeta } from '../core/command-meta';
import { parseDateTime } from '../core/datetime';
import { ApiError, notFound } from '../core/errors';
import { createLogger } from '../logger';
import type { Doc } from '../ports/document-store';
import { customerSubject } from '../privacy/seal';
import { SealingEventStore, storedEvents } from '../privacy/sealing-event-store';
import { ReplayFailure } from '../projection/replay-failure';
import { physicalName, versionOf } from '../projection/versions';
import { createRuntime, type Runtime } from '../runtime';
import { deliveryPastRetention } from '../webhooks-module';
import { kindFromFlag, kindInWords } from './audit-kinds';
import {
  boolFlag,
  type CliContext,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
  requireFlag,
} from './registry';

function stdoutIsFile(): boolean {
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}

/**
 * Up to this many bytes wait in a file's write stream before a write waits for them: the file is
 * written by libuv's thread pool while the next pages are read and formatted (two cores at work).
 */
const OUTPUT_BUFFER = 16 << 20;

/**
 * Where NDJSON goes: a new file (never overwritten), or stdout; both with back-pressure. Stdout
 * redirected to a regular file is written like --out (Node writes process.stdout to a file
 * synchronously, on the thread that formats).
 */
export function openOutput(path: string | undefined): {
  write(chunk: string | Uint8Array): Promise<void>;
  close(): Promise<void>;
  /**
   * After a failure part way: closes, and removes the --out file this run created (an incomplete
   * export must not pass for one). True when it removed one; stdout cannot be taken back.
   */
  discard(): Promise<boolean>;
} {
  if (path === undefined && stdoutIsFile()) {
    const stream = createWriteStream('', { fd: 1, autoClose: false, highWaterMark: OUTPUT_BUFFER });
    return {
      async write(chunk) {
        if (!stream.write(chunk)) await once(stream, 'drain');
      },
      close: () =>
        new Promise<void>((resolve, reject) =>
          stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
        ),
      discard: () => new Promise<boolean>((resolve) => stream.end(() => resolve(false))),
    };
  }
  if (path === undefined) {
    return {
      async write(chunk) {
        if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
      },
      async close() {},
      async discard() {
        return false;
      },
    };
  }
  let stream: WriteStream;
  let failed: Error | null = null;
  // Stopped part way (Ctrl-C, SIGTERM): the file this run created is removed before the exit, or an
  // incomplete export would pass for one (a signal ended the process and left it as it was).
  const onSignal = (signal: NodeJS.Signals) => {
    release();
    rmSync(path, { force: true });
    process.stderr.write(`\n${signal}: stopped; the incomplete --out ${path} is removed\n`);
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const release = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  const opened = new Promise<void>((resolve, reject) => {
    stream = createWriteStream(path, { flags: 'wx', highWaterMark: OUTPUT_BUFFER });
    stream.once('open', () => {
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      resolve();
    });
    stream.once('error', (err) => {
      failed = err;
      reject(
        new CliUsageError(
          (err as NodeJS.ErrnoException).code === 'EEXIST'
            ? `--out ${path} already exists: choose a new file`
            : `cannot write --out ${path}: ${err.message}`,
        ),
      );
    });
  });
  return {
    async write(chunk) {
      await opened;
      if (failed) throw failed;
      if (!stream.write(chunk)) await once(stream, 'drain');
    },
    async close() {
      await opened;
      await new Promise<void>((resolve, reject) =>
        stream.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
      release();
    },
    async discard() {
      if (
        !(await opened.then(
          () => true,
          () => false, // never opened (it existed, or could not be made): nothing of this run's to remove
        ))
      )
        return false;
      await new Promise<void>((resolve) => stream.end(() => resolve()));
      await rm(path, { force: true });
      release();
      return true;
    },
  };
}

function progressBar(ctx: CliContext, label: string, total: number): SingleBar | null {
  if (boolFlag(ctx, 'no-progress') === true) return null;
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% | position {value}/{total} | {events} events | {eta}s left`,
    stream: process.stderr,
    etaBuffer: 50,
  });
  bar.start(total, 0, { events: 0 });
  return bar;
}

/** `--from`/`--to`: RFC 3339 with an offset, as UTC ISO strings (the stores' recorded time). */
function instantFlag(ctx: CliContext, name: 'from' | 'to'): string | null {
  const v = optionalFlag(ctx, name);
  if (v === undefined) return null;
  const at = instantBound(v, name === 'from' ? 'at or after' : 'at or before');
  if (at === null)
    throw new CliUsageError(
      `--${name} must be an RFC 3339 date-time with an offset, e.g. 2026-05-01T00:00:00Z${whyNotInstant(v)}`,
    );
  return at;
}

/** What is wrong with a date-time flag's value, as parseDateTime says it (`` (got X: has no day 30…)``). */
function whyNotInstant(text: string): string {
  const parsed = parseDateTime(text);
  return parsed.ok ? ` (got ${text})` : ` (got ${text}: it ${parsed.reason})`;
}

/**
 * `--at` past the end of the log is refused, not answered with the latest state as if it were the
 * state then: a position after the log's last one (a typo, or a position of another log), or a time
 * after both now and the last event's recorded time (the log cannot say what will be; the clock
 * that recorded it may be ahead of this one). A time between the last event and now is answered:
 * nothing happened in between, so that is the state then.
 */
async function refuseAtPastTheEnd(ctx: CliContext, at: AsOf, atText: string): Promise<void> {
  const head = await ctx.rt.events.headPosition();
  const latest =
    head === null ? 'the log is empty' : `its last position is ${head}: --at ${head} gives the latest state`;
  if ('position' in at) {
    if (head === null || at.position > head)
      throw new CliUsageError(`--at ${atText} is past the end of the log (${latest})`);
    return;
  }
  const now = ctx.rt.clock.now().toISOString();
  if (at.time <= now) return;
  // The clock that recorded the log may be ahead of this one (another machine): a time the log
  // holds is never the future, whatever this clock says.
  let last: string | null = null;
  if (head !== null)
    for await (const e of ctx.rt.events.readAll({ after: head - 1n, limit: 1 })) last = e.created;
  if (last !== null && at.time <= last) return;
  throw new CliUsageError(
    `--at ${atText} is in the future (${last === null ? '' : `the log's last event was recorded at ${last}, `}now is ${now}): the log cannot say what will be then (${latest})`,
  );
}

/** How --from compares with --to as written (both valid): the bounds above may round apart. */
function instantOrder(ctx: CliContext): number {
  const [from, to] = (['from', 'to'] as const).map((n) => {
    const p = parseDateTime(optionalFlag(ctx, n) ?? '');
    return p.ok ? BigInt(p.value.epochSeconds) * 1_000_000_000n + BigInt(p.value.nanos) : 0n;
  }) as [bigint, bigint];
  return from > to ? 1 : from < to ? -1 : 0;
}

/**
 * Refuses a restaurant the log has never heard of: a typo must not read as "no events" (an empty
 * export or read model an auditor could take for the answer). Any event of its stream counts (an
 * auditor may export a restaurant since deleted); the answer is the other commands' (restaurantFlag):
 * "restaurant X not found", exit 1, not a usage error.
 */
async function requireKnownRestaurant(ctx: CliContext, restaurantId: string): Promise<void> {
  if ((await ctx.rt.events.readStream(restaurantStream(restaurantId), { limit: 1 })).length === 0)
    throw notFound(`restaurant ${restaurantId}`);
}

/** `--kind`: one of the kinds audit history knows (src/audit/subjects.ts, as audit-kinds.ts names them), or undefined. */
const kindFlag = (ctx: CliContext): string | undefined => kindFromFlag(optionalFlag(ctx, 'kind'));

/** How the help says what a time flag takes: exactly what parseDateTime accepts. */
const TIME_FLAGS =
  'a time: an RFC 3339 date-time with seconds and an offset, e.g. 2026-05-01T00:00:00Z or 2026-05-01T02:00:00+02:00; a date alone is refused';

/**
 * The log has nothing for an id (of the kind asked for): not found, exit 1 as for any command's
 * unknown id (`notFound`), not a usage error; said as the log holds it.
 */
const nothingOf = (id: string, kind: string | undefined) =>
  new ApiError(
    404,
    'RESOURCE_NOT_FOUND',
    kind === undefined
      ? `the log holds no event of ${id}`
      : `no ${kindInWords(kind).replace(/^an? /, '')} ${id} in the log`,
  );

function oneId(ctx: CliContext, what: string): string {
  // An empty id ("" from a shell variable left unset) names nothing: "the log holds no event of " said so badly.
  if (ctx.positionals.length !== 1 || ctx.positionals[0]!.trim() === '')
    throw new CliUsageError(`give exactly one ${what}`);
  return ctx.positionals[0]!;
}

async function history(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['json', 'kind', 'no-scan']);
  const id = oneId(
    ctx,
    'id (reservation, customer, credential, restaurant, webhook endpoint, OAuth application, manager…)',
  );
  const kind = kindFlag(ctx);
  const loaded = await loadSubject(ctx.rt.events, id, {
    ...(kind === undefined ? {} : { kind }),
    scan: boolFlag(ctx, 'no-scan') !== true,
  });
  if (loaded.events.length === 0) throw nothingOf(id, kind);
  const json = boolFlag(ctx, 'json') === true;
  if (!json)
    ctx.out(
      `${id}: ${loaded.events.length} event(s), ${loaded.kind === 'log' ? 'found by searching the whole log' : kindInWords(loaded.kind)}`,
    );
  const edited = await hashMismatches(ctx.rt.events, loaded.events);
  for (const e of loaded.events) {
    const entry = historyEntry(e, id, !edited.has(e.position));
    if (json) ctx.out(JSON.stringify(entry));
    else for (const l of historyText(entry)) ctx.out(l);
  }
}

async function asOf(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['at', 'kind', 'restaurant', 'collection', 'out', 'no-progress']);
  const atText = requireFlag(ctx, 'at');
  const at = parseAsOf(atText);
  if (at === null)
    throw new CliUsageError(
      `--at takes a log position (an integer) or an RFC 3339 date-time with an offset${whyNotInstant(atText)}`,
    );
  await refuseAtPastTheEnd(ctx, at, atText);
  const restaurant = optionalFlag(ctx, 'restaurant');
  const collection = optionalFlag(ctx, 'collection');
  if (restaurant === undefined && collection === undefined) {
    const id = oneId(ctx, 'id');
    const kind = kindFlag(ctx);
    const loaded = await loadSubject(ctx.rt.events, id, kind === undefined ? {} : { kind });
    if (loaded.events.length === 0) throw nothingOf(id, kind);
    const { state, events, erased, folded } = foldSubject(loaded, at);
    if (events === 0) throw new CliUsageError(`${id} did not exist yet at ${atText}`);
    // The events folded whose hash does not check: the state then comes from an edited log. Those
    // folded, not those recorded by then: under clocks that differ the fold stops at the first event
    // recorded after the time, and a later one recorded before it is not in the state.
    const edited = await hashMismatches(ctx.rt.events, folded);
    const hash_mismatches = folded
      .filter((e) => edited.has(e.position))
      .map((e) => ({ position: e.position.toString(), stream: e.stream, revision: e.revision }));
    for (const m of hash_mismatches)
      process.stderr.write(
        `warning: hash does not match: ${m.stream} revision ${m.revision} (position ${m.position}) was edited after it was written (audit verify): this state holds it\n`,
      );
    ctx.out(
      JSON.stringify(
        { id, kind: loaded.kind, at: atText, events, erased, state: withoutSecrets(state), hash_mismatches },
        null,
        2,
      ),
    );
    return;
  }
  if (restaurant === undefined || collection === undefined)
    throw new CliUsageError('rebuilding a read model as of then needs both --restaurant and --collection');
  if (ctx.positionals.length > 0)
    throw new CliUsageError('give an id, or --restaurant and --collection, not both');
  await requireKnownRestaurant(ctx, restaurant);
  const scratch = new EmbeddedDocumentStore();
  try {
    const head = await ctx.rt.events.headPosition();
    const bar = progressBar(ctx, 'replay', Number(head ?? 0n));
    const r = await replayInto(ctx.rt.events, scratch, allProjections(), at, (n, p) =>
      bar?.update(Number(p), { events: n }),
    );
    bar?.stop();
    const names = scratch.collectionNames();
    if (!names.includes(collection))
      throw new CliUsageError(`no read model is named ${collection} (read models: ${names.join(', ')})`);
    const docs = await restaurantDocuments(scratch, collection, restaurant);
    const out = openOutput(optionalFlag(ctx, 'out'));
    let chunk = '';
    // Secrets read [redacted] as in history and as-of of an id: a key's token hash, an endpoint's sealed
    // signing secret (docs/AUDIT.md).
    for (const d of docs) chunk += `${JSON.stringify(withoutSecrets(d))}\n`;
    if (chunk !== '') await out.write(chunk);
    await out.close();
    process.stderr.write(
      `${collection} of ${restaurant} as of ${atText}: ${docs.length} document(s), from ${r.events} events up to position ${r.position ?? 'none'}\n`,
    );
  } finally {
    await scratch.close();
  }
}

/**
 * A restaurant's documents of a read model: those naming it in `restaurant_id`, and the one keyed by
 * its id that names no restaurant (`restaurants`, `customer_feeds`, the analytics time zones), by _id.
 */
async function restaurantDocuments(
  docs: EmbeddedDocumentStore,
  collection: string,
  restaurant: string,
): Promise<Doc[]> {
  const col = docs.collection(collection);
  const found = await col.find({ restaurant_id: restaurant }, { sort: { _id: 1 } });
  const own = await col.findOne({ _id: restaurant });
  if (own === null || 'restaurant_id' in own) return found;
  return [...found, own].sort((a, b) =>
    String(a._id) < String(b._id) ? -1 : String(a._id) > String(b._id) ? 1 : 0,
  );
}

async function exportCommand(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['restaurant', 'from', 'to', 'out', 'no-progress']);
  const restaurantId = requireFlag(ctx, 'restaurant');
  const filter: ExportFilter = {
    restaurantId,
    from: instantFlag(ctx, 'from'),
    to: instantFlag(ctx, 'to'),
  };
  if (filter.from !== null && filter.to !== null && instantOrder(ctx) > 0)
    throw new CliUsageError('--to is before --from');
  await requireKnownRestaurant(ctx, restaurantId);
  const out = openOutput(optionalFlag(ctx, 'out'));
  const head = await ctx.rt.events.headPosition();
  const bar = progressBar(ctx, 'export', Number(head ?? 0n));
  const started = performance.now();
  const cpu = process.cpuUsage();
  let n = 0;
  try {
    n = await exportEvents(
      ctx.rt.events,
      filter,
      (chunk) => out.write(chunk),
      (p) => bar?.update(Number(p.position), { events: p.exported }),
    );
  } catch (err) {
    bar?.stop();
    // A damaged row (or a write that failed) part way: the file would hold only the events before it.
    if ((await out.discard()) && err instanceof Error)
      err.message += ` (nothing exported: the incomplete --out ${optionalFlag(ctx, 'out')} was removed)`;
    throw err;
  }
  bar?.stop();
  await out.close();
  const s = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const rate =
    n > 0 && s > 0
      ? `, ${Math.round(n / s)} events/s, ${((used.user + used.system) / n).toFixed(2)} µs CPU per event`
      : '';
  process.stderr.write(
    `exported ${n} event(s) of ${filter.restaurantId} in ${s.toFixed(1)} s${rate} (log scanned up to position ${head ?? 0})\n`,
  );
}

export interface VerifyReport {
  chain: ChainSummary | null;
  /**
   * Customers deleted in the log, those whose key still exists (an erasure left unfinished), and
   * customers merged into a deleted one (at any depth) that are not deleted with it (the same person).
   */
  erasure: { deleted: number; pending: string[]; merged: { customer: string; into: string }[] } | null;
  readModels: {
    events: number;
    documents: number;
    collections: string[];
    differences: ReadModelDifference[];
  } | null;
  /**
   * Why the read models could not be compared (a replay stopped on an event it cannot read: the log
   * edited), or null. The chain's findings are reported all the same: they need no parse.
   */
  readModelsSkipped?: string | null;
}

/** The two checks of `audit verify`, for the CLI and the benchmark. */
export async function verifyLog(
  rt: Pick<Runtime, 'events' | 'docs' | 'projections' | 'keys'> & { clock?: Clock },
  options: { chain: boolean; readModels: boolean; onProgress?: (events: number, position: bigint) => void },
): Promise<VerifyReport> {
  const report: VerifyReport = { chain: null, erasure: null, readModels: null };
  if (options.chain) {
    // The chain covers what is stored: sealed fields as sealed.
    const stored = storedEvents(rt.events);
    const verifier = new ChainVerifier(
      rt.events.kind !== 'eventstoredb',
      null,
      stored instanceof SqliteEventStore && stored.everyRowHashed,
    );
    const deleted = new Set<string>();
    const mergedInto = new Map<string, string>();
    const noteMerge = (data: { customer_id?: unknown; into_customer_id?: unknown }) => {
      if (typeof data.customer_id === 'string' && typeof data.into_customer_id === 'string')
        mergedInto.set(data.customer_id, data.into_customer_id);
    };
    let n = 0;
    let issued: bigint | null = null;
    if (stored instanceof SqliteEventStore) {
      // Read before the pages: every position up to it was a row then, so the pages must reach it.
      const seq = stored.lastPositionIssued();
      issued = seq === null ? null : BigInt(seq);
      // The stored text hashed as it is: no parse and re-serialisation of every event.
      for (let after = 0; ; ) {
        const rows = stored.chainPage(after, 5000);
        if (rows.length === 0) break;
        for (const [position, id, stream, revision, type, dataJson, metadataJson, , hash] of rows) {
          verifier.addStored({
            position: BigInt(position),
            id,
            stream,
            revision,
            type,
            dataJson,
            metadataJson,
            hash: hash ?? undefined,
          });
          if (type === 'CustomerDeleted') {
            const customer = (JSON.parse(dataJson) as { customer_id?: unknown }).customer_id;
            if (typeof customer === 'string') deleted.add(customer);
          } else if (type === 'CustomerMergedInto') noteMerge(JSON.parse(dataJson));
        }
        n += rows.length;
        after = rows[rows.length - 1]![0];
        options.onProgress?.(n, BigInt(after));
      }
    } else
      for await (const e of stored.readAll({ batchSize: 5000 })) {
        verifier.add(e);
        if (e.type === 'CustomerDeleted' && typeof e.data.customer_id === 'string')
          deleted.add(e.data.customer_id);
        else if (e.type === 'CustomerMergedInto') noteMerge(e.data);
        if (++n % 5000 === 0) options.onProgress?.(n, e.position);
      }
    report.chain = verifier.finish(issued);
    const pending: string[] = [];
    for (const id of deleted)
      if (
        rt.events instanceof SealingEventStore
          ? await rt.events.erasurePending(id)
          : (await rt.keys.find(customerSubject(id))).state === 'active'
      )
        pending.push(id);
    // Merged into a deleted customer, directly or through other merged ones, and not deleted itself.
    const merged: { customer: string; into: string }[] = [];
    const erasedWith = (id: string): boolean => {
      const seen = new Set<string>();
      for (
        let into = mergedInto.get(id);
        into !== undefined && !seen.has(into);
        into = mergedInto.get(into)
      ) {
        if (deleted.has(into)) return true;
        seen.add(into);
      }
      return false;
    };
    for (const [customer, into] of mergedInto)
      if (!deleted.has(customer) && erasedWith(customer)) merged.push({ customer, into });
    report.erasure = { deleted: deleted.size, pending, merged };
  }
  if (options.readModels) {
    // The raw store the projections write (rt.projections.docs), not the alias queries read through:
    // a versioned projection's collections are compared under the names it wrote them. Collections no
    // projection writes (web_sessions, rate limits) are never compared: only what the replay wrote is.
    const live = rt.projections.docs;
    const limits = new Map<string, bigint | null>();
    for (const p of rt.projections.projections) limits.set(p.name, await live.getCheckpoint(p.name));
    const scratch = new EmbeddedDocumentStore();
    try {
      const r = await replayInto(
        rt.events,
        scratch,
        rt.projections.projections,
        null,
        options.onProgress,
        limits,
      );
      const collections = scratch.collectionNames();
      const now = (rt.clock ?? systemClock).now();
      // Under the name each version of webhook_deliveries writes (webhook_deliveries, _v2…).
      const pastRetention = (doc: { created_at?: unknown; status?: unknown; attempts?: unknown }) =>
        deliveryPastRetention(doc, now);
      const retention = Object.fromEntries(
        allProjectionVersions()
          .filter((p) => p.collections?.includes(WEBHOOK_DELIVERIES))
          .map((p) => [physicalName(WEBHOOK_DELIVERIES, versionOf(p)), pastRetention]),
      );
      const compared = await compareReadModels(scratch, live, collections, retention);
      report.readModels = { events: r.events, collections, ...compared };
    } finally {
      await scratch.close();
    }
  }
  return report;
}

/**
 * `audit verify --json`: one line, snake_case as every other key it prints (docs/AUDIT.md, "audit
 * verify --json"). Up to 2026-11-28 the read models' part was `readModels`.
 */
export function verifyJson(report: VerifyReport, problems: number) {
  return {
    problems,
    chain: report.chain,
    erasure: report.erasure,
    read_models: report.readModelsSkipped ? { skipped: report.readModelsSkipped } : report.readModels,
  };
}

async function verify(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['no-chain', 'no-read-models', 'json', 'no-progress']);
  const head = await ctx.rt.events.headPosition();
  const chain = boolFlag(ctx, 'no-chain') !== true;
  const readModels = boolFlag(ctx, 'no-read-models') !== true;
  // Both checks turned off would check nothing and still end as a success (exit 0, no problem).
  if (!chain && !readModels)
    throw new CliUsageError(
      '--no-chain and --no-read-models together leave nothing to verify: keep one of the two checks',
    );
  const bar = progressBar(ctx, 'verify', Number(head ?? 0n) * ((chain ? 1 : 0) + (readModels ? 1 : 0)));
  let offset = 0;
  let lastPhase = 0;
  const onProgress = (n: number, p: bigint) => {
    if (Number(p) < lastPhase) offset += Number(head ?? 0n);
    lastPhase = Number(p);
    bar?.update(offset + Number(p), { events: n });
  };
  // The chain first: it reads the stored text and needs no parse, so an event edited into text no
  // reader can take is still reported by stream and revision.
  const report = chain
    ? await verifyLog(ctx.rt, { chain, readModels: false, onProgress })
    : ({ chain: null, erasure: null, readModels: null } as VerifyReport);
  if (readModels) {
    // The CLI opens this command without read models (registered so): they are rebuilt here, where
    // a replay that stops on such an event skips the comparison with its reason instead of ending
    // the command before the chain's findings are printed. A runtime that holds projections already
    // (a test's service) is compared as it is.
    let opened: Runtime | null = null;
    try {
      if (ctx.rt.projections.projections.length === 0)
        opened = await createRuntime(ctx.rt.config, {
          logger: createLogger(process.env.LOG_LEVEL ? ctx.rt.config.logLevel : 'warn'),
          logWriter: 'first write',
          clock: ctx.rt.clock,
        });
      const live = opened ?? ctx.rt;
      report.readModels = (
        await verifyLog(
          { ...ctx.rt, projections: live.projections },
          { chain: false, readModels: true, onProgress },
        )
      ).readModels;
    } catch (err) {
      // Only what the log holds makes the comparison impossible; a damaged file or a store out of
      // reach ends the command as before.
      if (!(err instanceof UnreadableEventError || err instanceof ReplayFailure)) throw err;
      report.readModelsSkipped = err.message;
    } finally {
      await opened?.close();
    }
  }
  bar?.stop();
  const problems =
    (report.chain?.findings.length ?? 0) +
    (report.erasure?.pending.length ?? 0) +
    (report.erasure?.merged.length ?? 0) +
    (report.readModels?.differences.length ?? 0) +
    (report.readModelsSkipped ? 1 : 0);
  if (boolFlag(ctx, 'json') === true) ctx.out(JSON.stringify(verifyJson(report, problems)));
  else {
    if (report.chain) {
      const c = report.chain;
      ctx.out(
        `hash chain: ${c.events} events in ${c.streams} streams; ${c.chained} chained and intact, ${c.unchained} written before the chain; ${c.findings.length} problem(s)`,
      );
      for (const f of c.findings)
        ctx.out(`  ${f.kind}: ${f.stream} revision ${f.revision} (position ${f.position}): ${f.message}`);
    }
    if (report.erasure) {
      const e = report.erasure;
      ctx.out(
        `erasure: ${e.deleted} deleted customer(s); ${e.pending.length} still with a key${e.pending.length > 0 ? ' (run audit erase --pending)' : ''}`,
      );
      for (const id of e.pending)
        ctx.out(`  erasure_incomplete: customer ${id} is deleted but its key exists`);
      for (const m of e.merged)
        ctx.out(
          `  erasure_incomplete: customer ${m.customer}, merged into ${m.into}, is not deleted with it (run audit erase --pending)`,
        );
    }
    if (report.readModelsSkipped) ctx.out(`read models: not compared (skipped): ${report.readModelsSkipped}`);
    if (report.readModels) {
      const m = report.readModels;
      ctx.out(
        `read models (${ctx.rt.docs.kind}): replayed ${m.events} events into ${m.collections.length} scratch collections (${m.documents} documents) and compared them with the live ones; ${m.differences.length} difference(s)`,
      );
      if (ctx.rt.docs.kind === 'embedded')
        ctx.out(
          '  (embedded: the live read models are those this command rebuilt from the log, so this checks that a replay is deterministic; a running server holds its own in memory)',
        );
      for (const d of m.differences)
        ctx.out(`  ${d.kind}: ${d.collection}/${d._id}${d.fields ? ` fields ${d.fields.join(', ')}` : ''}`);
    }
  }
  if (problems > 0) throw new Error(`audit verify found ${problems} problem(s)`);
}

async function erase(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['customer', 'reason', 'pending']);
  if (ctx.flags.customer === undefined && ctx.flags.pending === undefined)
    throw new CliUsageError(
      'give --customer <id> (erase that customer, [--reason text]) or --pending (finish erasures a crash interrupted)',
    );
  const sealing = ctx.rt.events;
  if (!(sealing instanceof SealingEventStore)) throw new Error('this runtime does not seal personal data');
  if (boolFlag(ctx, 'pending') === true) {
    if (optionalFlag(ctx, 'customer') !== undefined)
      throw new CliUsageError('give --customer or --pending, not both');
    const deleted = new Set<string>();
    /** Absorbed customer → the one it was merged into. */
    const mergedInto = new Map<string, string>();
    const unfinished = new UnfinishedRelinks();
    for await (const e of storedEvents(sealing).readAll({ batchSize: 5000 })) {
      unfinished.see(e);
      if (e.type === 'CustomerDeleted' && typeof e.data.customer_id === 'string')
        deleted.add(e.data.customer_id);
      else if (
        e.type === 'CustomerMergedInto' &&
        typeof e.data.customer_id === 'string' &&
        typeof e.data.into_customer_id === 'string'
      )
        mergedInto.set(e.data.customer_id, e.data.into_customer_id);
    }
    // A customer merged into one deleted before (an erasure interrupted, made before merged customers
    // were deleted with it, or that came between a merge's two steps) is the same person: deleted too,
    // at any depth.
    let relinks: RelinkOutcome = { relinked: 0, position: null, failed: 0, behind: false };
    for (let found = true; found; ) {
      found = false;
      for (const [absorbed, into] of mergedInto)
        if (deleted.has(into) && !deleted.has(absorbed)) {
          await deleteMergedAway(ctx.rt, [{ absorbed, into }], operatorMeta('audit-erase'));
          // Their reservations show `into`'s deletion: recorded only if that deletion owes it (not
          // one made before relinks were recorded, unfinished-relinks.ts).
          if (unfinished.owes(into, mergedInto))
            relinks = addRelinks(
              relinks,
              await relinkMergedAway(ctx.rt, [{ absorbed, into }], operatorMeta('audit-erase')),
            );
          deleted.add(absorbed);
          found = true;
        }
    }
    // Reservations still showing a deleted customer (a deletion a crash stopped before its relinks;
    // not one made before relinks were recorded): that customer's relinks run again, as its deletion
    // runs them.
    for (const id of unfinished.customers(mergedInto)) {
      const restaurantId = (await loadCustomer(ctx.rt, id)).restaurantId;
      if (restaurantId === null) continue;
      relinks = addRelinks(
        relinks,
        await relinkDeletion(ctx.rt, restaurantId, id, operatorMeta('audit-erase')),
      );
    }
    let n = 0;
    for (const id of deleted) if (await sealing.erase(id)) n++;
    await ctx.rt.settle(await ctx.rt.events.headPosition());
    ctx.out(
      `${deleted.size} deleted customer(s) in the log; ${n} key(s) destroyed now, the others already were`,
    );
    if (relinks.relinked > 0)
      ctx.out(`${relinks.relinked} reservation(s) of deleted customers now record that they show none`);
    const left = relinkLeftover(relinks);
    if (left) ctx.out(`note: their reservations: ${left}`);
    return;
  }
  const id = requireFlag(ctx, 'customer');
  const state = await loadCustomer(ctx.rt, id);
  if (state.status === 'none') throw nothingOf(id, 'customer');
  // The customers merged into it, at any depth, not deleted yet: deleted with it, and named, so the
  // operator knows whom this erasure also covered.
  const absorbed: string[] = [];
  if (state.status === 'active' || state.status === 'deleted')
    for (const next of (await withMergedInto(ctx.rt, id)).slice(1)) {
      const s = await loadCustomer(ctx.rt, next);
      if (s.status !== 'deleted' && s.status !== 'none') absorbed.push(next);
    }
  // A customer deleted before is deleted again: nothing for them, but the customers merged into them
  // are deleted with them (the same person) if they were not yet.
  const deletion =
    state.status === 'active' || state.status === 'deleted'
      ? await deleteCustomer(
          ctx.rt,
          id,
          optionalFlag(ctx, 'reason') ?? 'erasure requested',
          operatorMeta('audit-erase'),
        )
      : null;
  const destroyed = await sealing.erase(id);
  await ctx.rt.settle(await ctx.rt.events.headPosition());
  ctx.out(
    `customer ${id} erased: ${state.status === 'active' ? 'deleted, and ' : `was already ${state.status}; `}its key is ${destroyed ? 'destroyed now' : 'destroyed'}. Its personal fields read as erased everywhere, the log included.`,
  );
  if (absorbed.length > 0)
    ctx.out(
      `deleted with it, merged into it (the same person): ${absorbed.join(', ')}; their keys are destroyed too`,
    );
  // The erasure is done: reservations left without their relink recorded are told, not an error.
  const left = relinkLeftover(deletion?.relinked);
  if (left) ctx.out(`note: its reservations: ${left}`);
  if (state.status === 'merged')
    ctx.out(
      `note: ${id} was merged into ${state.mergedInto}; what the merge copied lives on that customer (erase it too if it is the same person)`,
    );
}

export function registerAuditCommands(): void {
  registerCliCommand({
    name: 'audit erase',
    switches: ['pending'],
    summary:
      'Right to erasure: delete a customer and destroy its key (its personal data becomes unreadable everywhere, the log included)',
    usage:
      "--customer <id> [--reason text (sealed with the customer's key: unreadable once erased, so keep a ticket reference elsewhere)] | --pending (finish erasures a crash interrupted)",
    run: erase,
  });
  registerCliCommand({
    name: 'audit history',
    switches: ['json', 'no-scan'],
    summary:
      'Every event of a reservation, customer, credential, restaurant, webhook endpoint, OAuth application, manager or any other id, with actor and changes',
    usage:
      '<id> [--json] [--kind reservation|customer|credential|restaurant|webhook-endpoint|oauth-application|manager] [--no-scan]',
    readModels: false,
    run: history,
  });
  registerCliCommand({
    name: 'audit as-of',
    switches: ['no-progress'],
    summary:
      'An entity as it was at a time or log position, or a read model of a restaurant rebuilt as of then',
    usage: `--at <time|position> <id> [--kind K] | --at <…> --restaurant R --collection C [--out file]   (${TIME_FLAGS})`,
    readModels: false,
    run: asOf,
  });
  registerCliCommand({
    name: 'audit export',
    switches: ['no-progress'],
    summary: "A restaurant's events as NDJSON (fields in docs/AUDIT.md), to stdout or a new file",
    usage: `--restaurant R [--from <time>] [--to <time>] [--out file] [--no-progress]   (${TIME_FLAGS})`,
    readModels: false,
    run: exportCommand,
  });
  registerCliCommand({
    name: 'audit verify',
    switches: ['no-chain', 'no-read-models', 'json', 'no-progress'],
    summary: "Check every stream's hash chain and that a replay of the log equals the live read models",
    usage: '[--no-chain] [--no-read-models] [--json] [--no-progress]',
    // Opened without read models: verify rebuilds them itself after the chain's check (above), so an
    // event an edit left unparsable is reported by the chain, not a crash at start.
    readModels: false,
    run: verify,
  });
}
