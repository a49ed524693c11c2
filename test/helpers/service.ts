// Starts the real service on an ephemeral port with its own data directory, and speaks HTTP to it as
// a partner would.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningService, startService } from '../../src/app';
import { loadConfig } from '../../src/config';
import type { Clock } from '../../src/core/clock';
import { createLogger, type Logger } from '../../src/logger';
import type { PublisherOptions } from '../../src/webhooks/publisher';
import { OpenApiChecker, publishedDocument } from './openapi';

export interface TestService extends RunningService {
  dataDir: string;
  api: (method: string, path: string, options?: RequestOptions) => Promise<TestResponse>;
  /** Stops the server; removes the data directory unless `keepData`. */
  close: (options?: { keepData?: boolean }) => Promise<void>;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is (no JSON encoding) */
  rawBody?: string;
  headers?: Record<string, string>;
  /**
   * `body` breaks the operation's documented requestBody schema on purpose (a test of the server's
   * refusal). Without it a body is checked against the document before it is sent; with it, the body
   * must fail that schema. The response is checked either way.
   */
  invalid?: boolean;
  /** The body is arbitrary (fuzzing): not held to the schema either way; the response still is. */
  anyBody?: boolean;
  /** Skip the check of this response against the OpenAPI document (deliberately odd requests). */
  unchecked?: boolean;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
  text: string;
}

/**
 * How long a test's request may go unanswered before it fails: a hang bound only (under the runner's
 * 300 s per file). A request on a loaded 2-core CI machine (behind a catch-up, an import's slices, the
 * sign-in's key derivation) is slow, not wrong; 15 s was a deadline a loaded machine could meet.
 */
export const REQUEST_HANG_MS = 120_000;

/** `promise`, or a failure naming `what` once it has hung for REQUEST_HANG_MS (a hang bound, not a speed). */
export async function withinHang<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: nothing after ${REQUEST_HANG_MS} ms`)),
      REQUEST_HANG_MS,
    );
  });
  try {
    return await Promise.race([promise, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What `starting` resolves to; if it rejects, `cleanups` run first (a receiver or fake provider the test
 * started before the service, still listening, would hold the file's process open to the runner's
 * 300 s kill and hide the start's failure). For a start just before the `try` whose `finally` closes both.
 */
export async function orClose<T>(starting: Promise<T>, ...cleanups: (() => Promise<unknown>)[]): Promise<T> {
  try {
    return await starting;
  } catch (err) {
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    throw err;
  }
}

export interface StartOptions {
  env?: Record<string, string>;
  bootstrap?: unknown;
  dataDir?: string;
  clock?: Clock;
  demo?: boolean;
  /** Check every response against the OpenAPI document (default true). */
  checkResponses?: boolean;
  /** The service's logger (access log included); silent by default. */
  logger?: Logger;
  /** The webhook publisher's options (its attempt timeout…), with the `webhooks` role. */
  webhooks?: PublisherOptions;
}

export async function startTestService(options: StartOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'couvert-test-'));
  // No scheduler unless a suite asks for it: cron jobs firing mid-test would make results depend on time.
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    ROLES: 'api,projector',
    ...options.env,
  };
  if (options.bootstrap) {
    const file = join(dataDir, 'bootstrap.json');
    writeFileSync(file, JSON.stringify(options.bootstrap));
    env.BOOTSTRAP_FILE = file;
  }
  const config = loadConfig(env);
  const service = await startService(config, {
    logger: options.logger ?? createLogger('silent'),
    ...(options.clock ? { clock: options.clock } : {}),
    demo: options.demo ?? false,
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
  });
  const base = service.url;
  // Every response of every e2e suite is checked against the OpenAPI document the server publishes:
  // an undocumented status or header, or a body that does not fit its schema, fails the test that saw it.
  let checker: Promise<OpenApiChecker> | null = null;
  let templates: { method: string; template: string; re: RegExp }[] = [];
  const documented = () => {
    checker ??= publishedDocument(service.rt).then((doc) => {
      templates = Object.entries(doc.paths).flatMap(([template, ops]) =>
        Object.keys(ops).map((m) => ({
          method: m.toUpperCase(),
          template,
          re: new RegExp(
            `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\\{\w+\\\}|\{\w+\}/g, '[^/]+')}$`,
          ),
        })),
      );
      return new OpenApiChecker(doc);
    });
    return checker;
  };
  const operationOf = (method: string, url: string) => {
    const pathname = new URL(url).pathname.replace(/\/$/, '') || '/';
    const onPath = templates.filter((t) => t.re.test(pathname));
    // HEAD is answered as GET (the document's description): checked against the GET operation.
    const as = method === 'HEAD' ? 'GET' : method;
    return { pathname, onPath, op: onPath.find((t) => t.method === as) };
  };
  const checking = (o: RequestOptions) => !o.unchecked && options.checkResponses !== false;
  const api = async (method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> => {
    const verb = method.toUpperCase();
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined = o.rawBody;
    const url = path.startsWith('http')
      ? path
      : `${base}${/^\/(api\/|oauth|__|healthz|docs|\.well-known|assets\/|sign-|dashboard)/.test(path) ? '' : '/api/partner/v1'}${path}`;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
      // What a test sends is held to the document as much as what it receives.
      if (checking(o) && !o.anyBody) {
        const check = await documented();
        const { op } = operationOf(verb, url);
        if (op) check.checkRequest(verb, op.template, o.body, o.invalid);
      }
    }
    const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(REQUEST_HANG_MS) });
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    const response = { status: res.status, headers: res.headers, body: parsed, text };
    if (checking(o)) {
      const check = await documented();
      const { pathname, onPath, op } = operationOf(verb, url);
      if (op) {
        check.check(verb, op.template, response);
        noteSeen(verb, op.template, response.status);
      }
      // A documented path without this method (405).
      else if (onPath[0]) check.checkUnrouted(verb, onPath[0].template, response);
      // A path the document does not list: under the partner prefix, the documented 404.
      else check.checkUnlisted(verb, pathname, response);
    }
    return response;
  };
  return {
    ...service,
    dataDir,
    api,
    close: async ({ keepData = false } = {}) => {
      await service.stop();
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * With OPENAPI_SEEN_DIR set, each checked answer is noted there as `METHOD template status`, one file a
 * process: `node --import tsx test/helpers/openapi-coverage.ts <dir>` then lists the documented answers
 * no suite saw (what a full run leaves unchecked against the document).
 */
function noteSeen(method: string, template: string, status: number): void {
  const dir = process.env.OPENAPI_SEEN_DIR;
  if (dir) appendFileSync(join(dir, `seen-${process.pid}.txt`), `${method} ${template} ${status}\n`);
}

/** A bootstrap restaurant in DESIGN.md §3's shape, with overridable parts. */
export function demoBootstrap(
  overrides: Record<string, unknown> = {},
  keys: { id: string; token: string; scopes: string[] }[] = [],
) {
  return {
    restaurants: [
      {
        id: 'rest_demo',
        name: 'Le Demo',
        slug: 'le-demo',
        country_code: 'FR',
        timezone: 'Europe/Paris',
        currency: 'EUR',
        api_option: true,
        suspended: false,
        customer_matching: true,
        api_keys: keys.map((k) => ({ id: k.id, name: k.id, token: k.token, scopes: k.scopes })),
        ...overrides,
      },
    ],
  };
}
