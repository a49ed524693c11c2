// Dashboard: customer CSV import over src/customer-import (upload → preview → import → progress →
// summary). The upload is multipart, parsed only for a signed-in user (koa-body/formidable, one file,
// a size limit); the import runs in the background, in batches that yield to the event loop, so the
// API keeps answering; the manager is the actor of every event it appends.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'koa';
import { koaBody } from 'koa-body';
import { ON_MATCH, type OnMatch } from '../../../commands/customer-import/events';
import { loadImportJob } from '../../../commands/customer-import/handler';
import {
  docStoppedSince,
  offersResume,
  type ResumeFile,
  resumeFileRefusal,
  resumeGate,
  stoppedSince,
  unreadFormRefusal,
  whileRunningHere,
} from '../../../commands/customer-import/resume';
import { takeImportSlot } from '../../../commands/customer-import/slot';
import type { ImportJobState } from '../../../commands/customer-import/state';
import { loadUserById } from '../../../commands/oauth/user-handler';
import {
  countCustomerImports,
  IMPORT_HISTORY_LIMIT,
  listCustomerImports,
} from '../../../queries/customer-imports';
import { ApiError, type Issue } from '../../core/errors';
import { newId } from '../../core/ids';
import {
  importCustomers,
  planImport,
  prepareImport,
  resumeImport,
  sha256InSteps,
  threadChoice,
  withCurrentRules,
} from '../../customer-import/engine';
import { failureForLog } from '../../customer-import/failure';
import { stoppedJobRows } from '../../customer-import/reconcile';
import { jobSummaryCsv } from '../../customer-import/summary';
import type { Runtime } from '../../runtime';
import { putFlash, takeFlash } from '../../web/flash';
import {
  claimUpload,
  ended,
  findUpload,
  keepUpload,
  markDone,
  markResumed,
  releaseRoom,
  releaseUpload,
  reserveRoom,
  runningJob,
  startedJob,
  type Upload,
  uploadHeldByOther,
  uploadRestaurantOfUser,
  wasLetGo,
  wasReplaced,
} from '../../web/import-uploads';
import { isManager, type Manager, managerForAction, managerForPage } from '../../web/manager';
import { importPage, jobPage, previewPage } from '../../web/pages/import-pages';
import { notYours, page, renderPageError, type SignedIn, seeOther, signedIn } from '../../web/respond';
import { sentenceStart } from '../../web/sentence';
import { type AnyRoute, defineRoute, PUBLIC, type RouteResult } from '../route';
import { enums, obj, optional, str } from '../schema';
import { form } from './dashboard-api-keys';

const BASE = '/dashboard/import';
/** What a matching row does unless the manager chooses otherwise (the upload form's first choice). */
const DEFAULT_ON_MATCH: OnMatch = 'return_existing';
/** The largest file the page takes (100,000 customer rows are about 10 MB). */

/**
 * Runs `fn` with a temporary directory for an uploaded file, removed afterwards whatever happens; a form
 * that is not multipart (no file chosen) is 415 first. The upload and resume forms share it.
 */
async function withUploadDir<T>(ctx: Context, fn: (dir: string) => Promise<T>): Promise<T> {
  if (!ctx.is('multipart/form-data'))
    throw new ApiError(
      415,
      'VALIDATION_ERROR',
      'Send the form as multipart/form-data (choose a file on the page).',
    );
  const dir = await mkdtemp(join(tmpdir(), 'couvert-upload-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const IMPORT_MAX_BYTES = 50 * 1024 * 1024;
const PREVIEW_ROWS = 20;

/** A size in words: "2 KB", "100 MB". */
const sizeWords = (bytes: number) =>
  bytes < 1024 * 1024
    ? `${Math.round(bytes / 1024).toLocaleString('en')} KB`
    : `${Math.round(bytes / 1024 / 1024).toLocaleString('en')} MB`;

/**
 * The multipart parser of one upload, writing into `dir`: a directory of the request's own, removed
 * whole when the request ends, so no file stays behind (a second file, a file under another field
 * name, a refused or broken upload).
 */
const uploadParser = (dir: string) =>
  koaBody({
    multipart: true,
    json: false,
    urlencoded: false,
    text: false,
    formidable: {
      uploadDir: dir,
      maxFiles: 1,
      maxFileSize: IMPORT_MAX_BYTES,
      maxTotalFileSize: IMPORT_MAX_BYTES,
      maxFields: 8,
      maxFieldsSize: 64 * 1024,
      allowEmptyFiles: true,
      minFileSize: 0,
    },
    onError: (err) => {
      if (/maxFiles/.test(err.message))
        throw new ApiError(
          400,
          'VALIDATION_ERROR',
          'Choose one file: the import takes one CSV file at a time.',
        );
      const tooBig = /maxFileSize|maxTotalFileSize|exceeded/i.test(err.message);
      throw new ApiError(
        tooBig ? 413 : 400,
        'VALIDATION_ERROR',
        tooBig
          ? `The file is larger than ${sizeWords(IMPORT_MAX_BYTES)}. Split it into several files.`
          : 'The upload could not be read. Choose the file again.',
      );
    },
  });

const isOnMatch = (v: unknown): v is OnMatch =>
  typeof v === 'string' && (ON_MATCH as readonly string[]).includes(v);

/** Who started an import, in words: a manager's email, or which operator tool. */
async function actorWords(rt: Runtime, actor: string, cache: Map<string, string>): Promise<string> {
  const known = cache.get(actor);
  if (known) return known;
  let words = actor;
  if (actor.startsWith('user:')) words = (await loadUserById(rt, actor.slice(5))).email ?? 'a former user';
  else if (actor.startsWith('operator:')) words = 'an operator (command line)';
  cache.set(actor, words);
  return words;
}

/** The restaurant's import history, from its read model (file, who, when, counts, status). */
async function jobLines(rt: Runtime, restaurantId: string) {
  const now = rt.clock.now().getTime();
  const who = new Map<string, string>();
  const docs = await listCustomerImports(rt.docs, restaurantId);
  const lines = [];
  for (const doc of docs)
    lines.push({
      doc,
      who: await actorWords(rt, doc.actor, who),
      stopped: docStoppedSince(doc, now) !== null,
    });
  return {
    lines,
    total:
      docs.length < IMPORT_HISTORY_LIMIT ? docs.length : await countCustomerImports(rt.docs, restaurantId),
  };
}

/** The header's problems a refusal lists; the others are counted ("and 19,995 more"). */
const ISSUES_SHOWN = 5;

/**
 * A file the reader refused (not UTF-8, not CSV, a bad header…) in one sentence: its message, then its
 * first issues (unless its one issue repeats the message) and how many more: a header of 20,000 unknown
 * columns is not a page of 20,000 sentences. The upload and the resume say it alike.
 */
function fileRefusalSentence(err: ApiError): string {
  const issues = ((err.details?.issues as Issue[] | undefined) ?? []).filter(
    (i) => i.message !== err.message,
  );
  const more = issues.length - ISSUES_SHOWN;
  const listed = issues
    .slice(0, ISSUES_SHOWN)
    .map((i) => i.message)
    .concat(more > 0 ? [`and ${more.toLocaleString('en')} more`] : [])
    .join('; ');
  const said = `${err.message}${listed ? `: ${listed}` : ''}`;
  return `${sentenceStart(said)}.`;
}

/** A file its upload's custom fields took, which those defined now refuse (withCurrentRules). */
const fieldsChanged = (err: ApiError) => {
  const why = fileRefusalSentence(err);
  return `The customer fields changed since this file was uploaded, and it cannot be imported now: ${why.charAt(0).toLowerCase()}${why.slice(1)} Nothing was imported.`;
};

/** The flash of an upload refused (Post/Redirect/Get): its sentence, shown once on the import page. */
const REFUSED = 'import_refused';
const mainFor = (restaurantId: string) => `${BASE}?restaurant=${encodeURIComponent(restaurantId)}`;

/**
 * An upload refused (not CSV, wrong encoding, too big, a bad header, no row…): its sentence goes on
 * the session and the answer is 303 to the import page, which shows it once. A reload of that page
 * sends nothing again; the file is not kept. `restaurantId`: null when the request's fields could not
 * be read (the multipart parser refused it), the page of the manager's first restaurant then.
 * `onMatch`: the manager's choice of what a matching row does, which the page keeps (the URL carries
 * a choice other than the default) so that the next upload is not made with another one.
 */
async function refuseUpload(
  rt: Runtime,
  who: SignedIn,
  restaurantId: string | null,
  sentence: string,
  onMatch?: OnMatch,
) {
  await putFlash(rt, who.session, {
    label: REFUSED,
    value: sentence,
    for: restaurantId === null ? BASE : mainFor(restaurantId),
  });
  const kept = onMatch && onMatch !== DEFAULT_ON_MATCH ? `&on_match=${onMatch}` : '';
  return seeOther(restaurantId === null ? BASE : `${mainFor(restaurantId)}${kept}`);
}

/** The preview page of an upload (GET: a reload repeats nothing), for `onMatch` when given. */
const previewPath = (restaurantId: string, uploadId: string, onMatch?: OnMatch) =>
  `${BASE}/uploads/${encodeURIComponent(uploadId)}?restaurant=${encodeURIComponent(restaurantId)}${onMatch ? `&on_match=${onMatch}` : ''}`;

const mainPage = async (rt: Runtime, m: Manager, alert: string | null, status = 200, onMatch?: OnMatch) => {
  const { lines, total } = await jobLines(rt, m.restaurant._id);
  return page(
    importPage(m.shell, {
      jobs: lines,
      total,
      alert,
      onMatch,
      maxSize: sizeWords(Math.min(IMPORT_MAX_BYTES, rt.config.importUploadsMaxBytes)),
    }),
    {},
    status,
  );
};

/** A job of the manager's restaurant (its stream says which), or the 404 page. */
async function jobOf(rt: Runtime, m: Manager, id: string) {
  const { state } = await loadImportJob(rt, id);
  if (state.status === 'none') {
    // Started a moment ago in this process: its first event is on its way.
    if (runningJob(rt, m.restaurant._id) === id) return state;
    throw notYours();
  }
  if (state.restaurantId !== m.restaurant._id) throw notYours();
  return state;
}

/** The upload's preview: the form's fields and its one file, parsed into `dir` (removed by the caller). */
async function previewUpload(
  rt: Runtime,
  who: SignedIn,
  ctx: Context,
  requestId: string,
  dir: string,
): Promise<RouteResult> {
  try {
    await uploadParser(dir)(ctx, async () => {});
  } catch (err) {
    // Refused by the parser (too big, two files, unreadable): its fields are not read, so neither its
    // CSRF token nor its restaurant. The session cookie is SameSite=Lax (no cross-site POST carries
    // it), and what is kept is this fixed sentence, shown once.
    if (err instanceof ApiError && err.status < 500) return refuseUpload(rt, who, null, err.message);
    throw err;
  }
  const fields = (ctx.request.body ?? {}) as Record<string, unknown>;
  const files = (ctx.request.files ?? {}) as Record<string, unknown>;
  const file = files.file as { filepath: string; originalFilename: string | null; size: number } | undefined;
  const m = await managerForAction(rt, ctx, fields, requestId);
  if (!isManager(m)) return m;
  const onMatch = isOnMatch(fields.on_match) ? fields.on_match : DEFAULT_ON_MATCH;
  const refuse = (sentence: string) => refuseUpload(rt, m, m.restaurant._id, sentence, onMatch);
  if (!file || Array.isArray(file)) return refuse('Choose a CSV file to upload.');
  if (file.size === 0) return refuse('The file is empty.');
  // Room in the previews' memory budget before the file is read (import-uploads.ts says why).
  const budget = rt.config.importUploadsMaxBytes;
  const room = reserveRoom(rt, m.user.user_id, file.size, budget, rt.clock.now().getTime());
  if ('refused' in room)
    return refuse(
      room.refused === 'too_large'
        ? `The file is larger than this server keeps for previews (${sizeWords(budget)}). Split it into several files.`
        : 'The server is reading other files for their previews at this moment. Try again in a minute.',
    );
  const { reservation } = room;
  try {
    const bytes = await readFile(file.filepath);
    let prepared: Awaited<ReturnType<typeof prepareImport>>;
    try {
      prepared = await prepareImport(rt, m.restaurant._id, bytes);
    } catch (err) {
      // A file's fault is its one issue, whose message the error repeats: said once, as a sentence.
      if (err instanceof ApiError && err.status < 500) return refuse(fileRefusalSentence(err));
      throw err;
    }
    if (prepared.table.rows.length === 0) return refuse('The file has a header row but no customer.');
    const upload = keepUpload(
      rt,
      reservation,
      {
        restaurantId: m.restaurant._id,
        userId: m.user.user_id,
        fileName: (file.originalFilename ?? 'customers.csv').slice(0, 200),
        bytes: bytes.length,
        onMatch,
        prepared,
      },
      rt.clock.now().getTime(),
    );
    return seeOther(previewPath(m.restaurant._id, upload.id));
  } finally {
    releaseRoom(rt, reservation);
  }
}

/**
 * A held upload's rows checked by the custom fields defined now (the upload may be 30 minutes old), or,
 * when a column's field was removed since (a 400), the import page saying so (409); `undo` runs first
 * on any failure.
 */
async function preparedNow(
  rt: Runtime,
  m: Manager,
  upload: Upload,
  undo?: () => void,
): Promise<{ prepared: Awaited<ReturnType<typeof withCurrentRules>> } | { refused: RouteResult }> {
  try {
    return { prepared: await withCurrentRules(rt, upload.prepared) };
  } catch (err) {
    undo?.();
    if (err instanceof ApiError && err.status === 400)
      return { refused: await mainPage(rt, m, fieldsChanged(err), 409) };
    throw err;
  }
}

/**
 * The preview page of a held upload for `onMatch`: the first rows' outcomes under that choice, and an
 * Import form that imports with that very choice (the page's other form previews another one). A GET
 * page: it changes nothing (the choice last made is set by the POST that redirects here).
 */
async function previewOf(rt: Runtime, m: Manager, upload: Upload, onMatch: OnMatch) {
  // By the custom fields defined now, as Import will check the rows (the upload may be 30 minutes old).
  const now = await preparedNow(rt, m, upload);
  if ('refused' in now) return now.refused;
  const plan = await planImport(rt, now.prepared, onMatch, PREVIEW_ROWS);
  return page(
    previewPage(m.shell, {
      uploadId: upload.id,
      fileName: upload.fileName,
      columns: upload.prepared.table.header,
      plan,
      onMatch,
    }),
  );
}

/** The page for an upload no longer held (expired, forgotten by a restart, or let go to make room). */
const uploadGone = (rt: Runtime, m: Manager, uploadId: string, status = 400) =>
  mainPage(
    rt,
    m,
    wasReplaced(rt, uploadId)
      ? 'You uploaded another file after this one: one file waits for its import per manager, the latest. Upload this file again to import it.'
      : wasLetGo(rt, uploadId)
        ? `This upload was let go to make room for newer uploads: the server keeps at most ${sizeWords(rt.config.importUploadsMaxBytes)} of files waiting for their import. Upload the file again.`
        : 'This upload is no longer here: an upload waits 30 minutes, and a restart of the server forgets it. Upload the file again.',
    status,
  );

/**
 * A form naming an upload not held for this restaurant: the manager's own upload for another restaurant
 * they manage (a form of another tab) is still there, so the page says whose it is; another user's, or
 * one for a restaurant no longer managed, is said of as any upload gone (nothing of it is told).
 */
function notHeldHere(rt: Runtime, m: Manager, uploadId: string, now: number) {
  const ownFor = uploadRestaurantOfUser(rt, uploadId, m.user.user_id, now);
  const other = m.shell.restaurants.find((r) => r.id === ownFor && r.id !== m.restaurant._id);
  if (!other) return uploadGone(rt, m, uploadId);
  return mainPage(
    rt,
    m,
    `This file was uploaded for ${other.name}, another of your restaurants, not ${m.restaurant.name}: nothing was imported. Switch to ${other.name} and import it from its preview there, or upload the file again here.`,
    400,
  );
}

/**
 * An import run in the background (the page follows its progress): a failure is logged for operators
 * (scrubbed of personal data: failure.ts; the page says it in words), and the run is marked ended.
 */
function inBackground(
  rt: Runtime,
  m: Manager,
  requestId: string,
  jobId: string,
  run: Promise<unknown>,
): void {
  run
    .catch((err) =>
      rt.logger.error(
        {
          request_id: requestId,
          job_id: jobId,
          restaurant_id: m.restaurant._id,
          actor: m.meta.actor,
          err: failureForLog(err),
        },
        'customer import failed',
      ),
    )
    .finally(() => markDone(rt, m.restaurant._id, jobId));
}

/** How long a resume waits for a failed run of this process to end (it has recorded its failure). */
const RUN_END_WAIT_MS = 15_000;

/**
 * A job's page: its progress, or once it has stopped (failed, or its process gone) what was done and
 * what was not (reconcile.ts: rows written after the last recorded one count as done) and the form
 * that finishes it. `alert`: a refused resume's reason.
 */
async function jobView(
  rt: Runtime,
  m: Manager,
  id: string,
  state: ImportJobState,
  alert: string | null,
  status = 200,
  refresh = true,
) {
  const who = state.actor ? await actorWords(rt, state.actor, new Map()) : undefined;
  // Running, but silent past the stale limit: the process importing it stopped. The time is the
  // job stream's last event, as the slot's rule reads it (slot.ts), from the same read as the
  // progress shown: the history's read model may not have taken that event in yet.
  const since = stoppedSince(state, rt.clock.now().getTime());
  const rows = await stoppedJobRows(rt, state, since !== null);
  const resumable = offersResume(state, id, rows.written !== null, runningJob(rt, m.restaurant._id));
  return page(
    jobPage(m.shell, {
      id,
      state,
      who,
      stoppedSince: since,
      written: rows.written,
      resumable,
      alert,
      refresh,
    }),
    { scripts: refresh },
    status,
  );
}

/**
 * Resumes a stopped job with the file the manager uploaded again (multipart, into `dir`): the very
 * file (SHA-256), the job's on_match, from the row after the last recorded one; rows a previous run
 * wrote without recording them are recognised (engine.ts), not imported twice.
 */
async function resumeUpload(
  rt: Runtime,
  ctx: Context,
  requestId: string,
  dir: string,
  jobId: string,
): Promise<RouteResult> {
  try {
    await uploadParser(dir)(ctx, async () => {});
  } catch (err) {
    // Refused by the multipart parser (too big, two files, unreadable): its fields are not read, so
    // neither its CSRF token nor its restaurant. Nothing is done: the job's page (its restaurant's, for
    // a manager of it; the 404 page otherwise) says why, with its form to try again.
    if (err instanceof ApiError && err.status < 500) return jobPageSaying(rt, ctx, requestId, jobId, err);
    throw err;
  }
  const fields = (ctx.request.body ?? {}) as Record<string, unknown>;
  const files = (ctx.request.files ?? {}) as Record<string, unknown>;
  const file = files.file as { filepath: string; size: number } | undefined;
  const m = await managerForAction(rt, ctx, fields, requestId);
  if (!isManager(m)) return m;
  const state = await jobOf(rt, m, jobId);
  const progress = seeOther(`${BASE}/jobs/${jobId}?restaurant=${encodeURIComponent(m.restaurant._id)}`);
  // A failed run of this process still ending (its failure is recorded: it writes nothing more).
  if (state.status === 'failed') await ended(rt, m.restaurant._id, jobId, RUN_END_WAIT_MS);
  // Finished, running (another tab resumed it, or its process still writes): its page says which.
  const here = () => runningJob(rt, m.restaurant._id);
  if (resumeGate(state, jobId, rt.clock.now().getTime(), here()) === 'show_job') return progress;
  const refuse = (r: { message: string; status: number }) =>
    jobView(rt, m, jobId, state, r.message, r.status);
  if (!file || Array.isArray(file) || file.size === 0) return refuse(resumeFileRefusal(state, null));
  const budget = rt.config.importUploadsMaxBytes;
  const room = reserveRoom(rt, m.user.user_id, file.size, budget, rt.clock.now().getTime());
  if ('refused' in room)
    return refuse(
      room.refused === 'too_large'
        ? {
            message: `The file is larger than this server keeps for imports (${sizeWords(budget)}).`,
            status: 413,
          }
        : {
            message: 'The server is reading other files at this moment. Try again in a minute.',
            status: 503,
          },
    );
  let prepared: Awaited<ReturnType<typeof prepareImport>> | null = null;
  let chosen: ResumeFile;
  try {
    const bytes = await readFile(file.filepath);
    try {
      prepared = await prepareImport(rt, m.restaurant._id, bytes);
      chosen = { sha256: prepared.fileSha256, refused: null };
    } catch (err) {
      // A file (or header) the reader refuses: another file, or the very file refused now (the
      // restaurant's custom fields may have changed): the decision says which.
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      chosen = { sha256: await sha256InSteps(bytes), refused: fileRefusalSentence(err) };
    }
  } finally {
    releaseRoom(rt, room.reservation);
  }
  const refusal = resumeFileRefusal(state, chosen);
  if (refusal !== null) return refuse(refusal);
  // Read, and the very file (a file the reader refused is always refused above).
  if (prepared === null) throw new Error('a refused file passed resumeFileRefusal');
  if (!markResumed(rt, m.restaurant._id, jobId)) {
    const running = whileRunningHere(jobId, here());
    return running === 'show_job' ? progress : refuse(running);
  }
  try {
    await takeImportSlot(rt, { jobId, restaurantId: m.restaurant._id }, m.meta);
  } catch (err) {
    markDone(rt, m.restaurant._id, jobId);
    if (err instanceof ApiError && err.status === 409) return refuse({ message: err.message, status: 409 });
    throw err;
  }
  // In the background, as a new import: the page follows its progress.
  inBackground(
    rt,
    m,
    requestId,
    jobId,
    resumeImport(rt, prepared, jobId, { meta: m.meta, ...threadChoice(rt.config) }),
  );
  return progress;
}

/**
 * The job's page saying why a resume whose form could not be read was refused (the multipart parser's
 * sentence), for the signed-in user who manages the job's restaurant; the 404 page for anyone else and
 * for a job that does not exist (the same answer: a job id tells nothing of another restaurant).
 */
async function jobPageSaying(
  rt: Runtime,
  ctx: Context,
  requestId: string,
  jobId: string,
  err: ApiError,
): Promise<RouteResult> {
  const { state } = await loadImportJob(rt, jobId);
  if (state.restaurantId === null) throw notYours();
  const m = await managerForPage(rt, ctx, state.restaurantId, requestId);
  if (!isManager(m)) return m;
  const now = await jobOf(rt, m, jobId);
  // Finished, or running: its page, as for a form that was read.
  if (resumeGate(now, jobId, rt.clock.now().getTime(), runningJob(rt, m.restaurant._id)) === 'show_job')
    return seeOther(`${BASE}/jobs/${jobId}?restaurant=${encodeURIComponent(m.restaurant._id)}`);
  const refusal = unreadFormRefusal(now, err, sizeWords(IMPORT_MAX_BYTES));
  return jobView(rt, m, jobId, now, refusal.message, refusal.status);
}

export const dashboardImportRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: BASE,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardImport',
    summary: 'Customer import: upload a CSV file',
    tag: 'OAuth',
    access: PUBLIC,
    // on_match: the choice a refused upload was made with (refuseUpload), checked again on the form.
    query: obj(
      { restaurant: optional(str({ max: 64 })), on_match: optional(enums(ON_MATCH)) },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      // An upload refused a moment ago (refuseUpload): its sentence, once.
      const refused =
        (await takeFlash(rt, m.session, mainFor(m.restaurant._id))) ??
        (query.restaurant === undefined ? await takeFlash(rt, m.session, BASE) : null);
      return mainPage(rt, m, refused?.label === REFUSED ? refused.value : null, 200, query.on_match);
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/upload`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardImportUpload',
    readsOwnBody: true,
    summary:
      'Upload a customer CSV file (multipart/form-data: csrf_token, restaurant_id, on_match, file) and preview it',
    tag: 'OAuth',
    access: PUBLIC,
    responses: {
      303: {
        description:
          'To the preview page (GET /dashboard/import/uploads/{id}), or to the import page saying why the file was refused',
      },
    },
    renderError: renderPageError,
    handler: async ({ rt, ctx, requestId }) => {
      // Nobody signed in: nothing is read from the request.
      const who = await signedIn(rt, ctx);
      if (!who) return seeOther('/sign-in?next=%2Fdashboard%2Fimport');
      return withUploadDir(ctx, (dir) => previewUpload(rt, who, ctx, requestId, dir));
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/preview`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardImportPreview',
    summary: 'Preview an uploaded customer file again with another on_match',
    tag: 'OAuth',
    access: PUBLIC,
    body: form({ upload_id: str({ max: 64 }), on_match: optional(str({ max: 32 })) }),
    bodyRequired: true,
    responses: { 303: { description: 'To the preview page for that on_match' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const now = rt.clock.now().getTime();
      // Its import started meanwhile (another tab): its progress page.
      const already = startedJob(rt, body.upload_id, m.user.user_id, m.restaurant._id, now);
      if (already)
        return seeOther(`${BASE}/jobs/${already}?restaurant=${encodeURIComponent(m.restaurant._id)}`);
      const upload = findUpload(rt, body.upload_id, m.user.user_id, m.restaurant._id, now);
      if (!upload) return notHeldHere(rt, m, body.upload_id, now);
      // The choice last previewed: what Import does when its form carries none.
      if (isOnMatch(body.on_match)) upload.onMatch = body.on_match;
      return seeOther(previewPath(m.restaurant._id, upload.id, upload.onMatch));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/uploads/{id}`,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardImportUploadPreview',
    summary: 'The preview of an uploaded customer file, waiting for its import',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: str({ min: 1, max: 64 }) }),
    // on_match: the choice the page previews (its own form sends it); any other value is refused, as
    // every page refuses a value it does not take (a typo in a link is not previewed as another choice).
    query: obj(
      { restaurant: optional(str({ max: 64 })), on_match: optional(enums(ON_MATCH)) },
      { open: true },
    ),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const now = rt.clock.now().getTime();
      // Its import started (this tab or another): its progress page.
      const already = startedJob(rt, params.id, m.user.user_id, m.restaurant._id, now);
      if (already)
        return seeOther(`${BASE}/jobs/${already}?restaurant=${encodeURIComponent(m.restaurant._id)}`);
      const upload = findUpload(rt, params.id, m.user.user_id, m.restaurant._id, now);
      // Another user's upload, or one of another restaurant: the 404 page, as for any id not ours.
      if (!upload && uploadHeldByOther(rt, params.id, m.user.user_id, m.restaurant._id)) throw notYours();
      if (!upload) return uploadGone(rt, m, params.id, 404);
      return previewOf(rt, m, upload, query.on_match ?? upload.onMatch);
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/start`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardImportStart',
    summary: 'Start importing an uploaded customer file',
    tag: 'OAuth',
    access: PUBLIC,
    body: form({ upload_id: str({ max: 64 }), on_match: optional(str({ max: 32 })) }),
    bodyRequired: true,
    responses: { 303: { description: 'To the progress page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, body, requestId }) => {
      const m = await managerForAction(rt, ctx, body, requestId);
      if (!isManager(m)) return m;
      const now = rt.clock.now().getTime();
      const progress = (jobId: string) =>
        seeOther(`${BASE}/jobs/${jobId}?restaurant=${encodeURIComponent(m.restaurant._id)}`);
      // A second click on Import (a double click, a resubmitted form): the import it started.
      const already = startedJob(rt, body.upload_id, m.user.user_id, m.restaurant._id, now);
      if (already) return progress(already);
      const upload = findUpload(rt, body.upload_id, m.user.user_id, m.restaurant._id, now);
      if (!upload) return notHeldHere(rt, m, body.upload_id, now);
      // The choice the preview page showed the outcomes of (its Import form carries it); without one,
      // the one last previewed.
      const onMatch = isOnMatch(body.on_match) ? body.on_match : upload.onMatch;
      const jobId = newId('imp');
      const before = claimUpload(rt, upload, jobId, now);
      // The rows are checked by the custom fields defined now (the upload may be 30 minutes old): a
      // column whose field was removed since refuses the file, as its upload would be refused now.
      const checked = await preparedNow(rt, m, upload, () => releaseUpload(rt, upload, jobId, before));
      if ('refused' in checked) return checked.refused;
      const { prepared } = checked;
      // One import at a time per restaurant, decided on the write side (the slot stream), so two
      // managers (or a manager and the CLI) starting together cannot both import.
      try {
        await takeImportSlot(rt, { jobId, restaurantId: m.restaurant._id }, m.meta);
      } catch (err) {
        releaseUpload(rt, upload, jobId, before);
        if (err instanceof ApiError && err.status === 409) return mainPage(rt, m, err.message, 409);
        throw err;
      }
      // In the background: the response does not wait, and the batches yield to other requests.
      const running = importCustomers(rt, prepared, {
        onMatch,
        fileName: upload.fileName,
        meta: m.meta,
        jobId,
        // Checked above, once: checked again here, a field removed in between left the slot held by a
        // job that never started (and the manager on the progress page of no job).
        rulesChecked: true,
        ...threadChoice(rt.config),
      });
      inBackground(rt, m, requestId, jobId, running);
      return progress(jobId);
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/jobs/{id}`,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardImportJob',
    summary: 'The progress and result of a customer import',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: str({ min: 1, max: 64 }) }),
    // refresh=off: the manager stopped the page refreshing itself (the page's Stop refreshing link).
    query: obj({ restaurant: optional(str({ max: 64 })), refresh: optional(enums(['off'])) }, { open: true }),
    responses: { 200: { description: 'An HTML page' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const state = await jobOf(rt, m, params.id);
      return jobView(rt, m, params.id, state, null, 200, query.refresh !== 'off');
    },
  }),
  defineRoute({
    method: 'POST',
    path: `${BASE}/jobs/{id}/resume`,
    absolute: true,
    hidden: true,
    operationId: 'dashboardImportResume',
    readsOwnBody: true,
    summary:
      'Finish a stopped customer import with its file uploaded again (multipart/form-data: csrf_token, restaurant_id, file)',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: str({ min: 1, max: 64 }) }),
    responses: { 303: { description: "To the job's progress page" } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, requestId }) => {
      if (!(await signedIn(rt, ctx))) return seeOther('/sign-in?next=%2Fdashboard%2Fimport');
      return withUploadDir(ctx, (dir) => resumeUpload(rt, ctx, requestId, dir, params.id));
    },
  }),
  defineRoute({
    method: 'GET',
    path: `${BASE}/jobs/{id}/summary.csv`,
    absolute: true,
    hidden: true,
    // Parameters of a link's own (utm_source…) are ignored, as a page does; those read are checked.
    openQuery: true,
    operationId: 'dashboardImportSummary',
    summary: 'The summary of a customer import, one line per row (CSV)',
    tag: 'OAuth',
    access: PUBLIC,
    params: obj({ id: str({ min: 1, max: 64 }) }),
    query: obj({ restaurant: optional(str({ max: 64 })) }, { open: true }),
    responses: { 200: { description: 'A CSV file' }, 303: { description: 'To the sign-in page' } },
    renderError: renderPageError,
    handler: async ({ rt, ctx, params, query, requestId }) => {
      const m = await managerForPage(rt, ctx, query.restaurant, requestId);
      if (!isManager(m)) return m;
      const state = await jobOf(rt, m, params.id);
      if (state.status === 'none') throw notYours();
      const base = (state.fileName ?? 'customers')
        .replace(/\.csv$/i, '')
        .replace(/[^A-Za-z0-9._-]+/g, '_')
        .slice(0, 80);
      return {
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': `attachment; filename="${base || 'customers'}-summary.csv"`,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
        },
        body: await jobSummaryCsv(rt, params.id),
      };
    },
  }),
];
