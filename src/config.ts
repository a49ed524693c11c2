// Every environment variable of DESIGN.md §3, read and validated once at start. A bad value stops the
// start with a message naming the variable.

import { existsSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { maskCredentials } from './core/urls';
import { parseSecretsKey } from './secrets';

export const ROLES = ['api', 'projector', 'scheduler', 'webhooks'] as const;
export type Role = (typeof ROLES)[number];

export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  store: 'embedded' | 'eventstoredb';
  eventstoreUrl: string | null;
  mongodbUrl: string | null;
  mongodbDb: string;
  bootstrapFile: string | null;
  rateLimitPerMinute: number;
  oauthTokenRateLimitPerMinute: number;
  /** Sign-in attempts per client IP per 15 minutes (the consent pages and the dashboard). */
  signInAttemptsPerIp: number;
  /** Failed sign-ins per account per 15 minutes before the account's sign-in waits. */
  signInFailuresPerAccount: number;
  webhookAllowPrivateTargets: boolean;
  /** SECRETS_KEY (32 bytes): encrypts webhook signing secrets at rest; null = DATA_DIR/secrets.key (embedded only). */
  secretsKey: Buffer | null;
  testClock: boolean;
  /** Read X-Forwarded-For for the client IP (only behind a proxy you trust). */
  trustProxy: boolean;
  /** Scaled out: how long a write waits for the projections it will read (ms). */
  readYourWritesTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Scaled out: which roles this process runs. */
  roles: Set<Role>;
  /** Largest accepted JSON body. */
  bodyLimitBytes: number;
  /**
   * How long a JSON or form body may take to arrive, from when it starts being read (ms): past it 408
   * and its place in the body budget given back (src/http/body-deadline.ts). Multipart uploads keep
   * Node's own 5 minutes.
   */
  bodyTimeoutMs: number;
  /**
   * The dashboard's customer files held in memory for preview (and being read) at once, in bytes of
   * files, across every user: past it the oldest previews are let go (src/web/import-uploads.ts).
   */
  importUploadsMaxBytes: number;
  /**
   * A large customer import runs its command side in a thread of its own (docs/customer-import.md):
   * the API's thread keeps a third of the work and of the GC pauses, and the import is slower on two
   * cores (docs/BENCHMARKS.md). false: on the API's thread, as before.
   */
  importThread: boolean;
  /** The WhatsApp Business Cloud API (missed-call messages); null: messages go to the outbox. */
  whatsapp: WhatsAppConfig | null;
  /** Accepted but probably not what the operator meant (a value the chosen store ignores): print at start. */
  warnings: string[];
}

export interface WhatsAppConfig {
  accessToken: string;
  baseUrl: string;
  apiVersion: string;
  timeoutMs: number;
  maxRetries: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** Every boolean variable (TRUST_PROXY, WEBHOOK_ALLOW_PRIVATE_TARGETS, TEST_CLOCK, IMPORT_THREAD) reads these, as the README lists. */
function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(
    `${name} must be true or false (also accepted: 1 or 0, yes or no, in any case), got "${env[name]}"`,
  );
}

export interface ReservationJobSettings {
  /** NO_SHOW_GRACE_MINUTES (default 30): booked guests not seated this long after the start are no-shows. */
  noShowGraceMinutes: number;
  /**
   * SEATING_REPAIR_AFTER_MINUTES (default 5): how long a reservation and its seatings may disagree
   * (a request died between its two appends) before the repair job steps in. Longer than any request.
   */
  repairAfterMinutes: number;
}

function minutes(env: Env, name: string, fallback: number, min: number) {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > 7 * 24 * 60)
    throw new ConfigError(`${name} must be a whole number of minutes from ${min} to 10080, got "${raw}"`);
  return Number(raw);
}

/**
 * Read by the scheduler's jobs at each run (src/jobs/reservation-jobs.ts) and by the CLI, and checked
 * by loadConfig at every start whatever ROLES says: a process without the scheduler (ROLES=api) used
 * to accept a bad value, which the next process given the scheduler then refused.
 */
export const reservationJobSettings = (env: Env): ReservationJobSettings => ({
  noShowGraceMinutes: minutes(env, 'NO_SHOW_GRACE_MINUTES', 30, 0),
  repairAfterMinutes: minutes(env, 'SEATING_REPAIR_AFTER_MINUTES', 5, 1),
});

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

// EventStoreDB and MongoDB connection strings may list several hosts (a cluster, a replica set),
// which WHATWG URL parsing refuses: each host is checked on its own, then the rest with the first.
function parseUrl(raw: string, multiHost: boolean): URL {
  try {
    return new URL(raw);
  } catch (err) {
    const m = multiHost ? /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^/?#@]*,[^/?#@]*)(.*)$/i.exec(raw) : null;
    if (!m) throw err;
    const [, scheme, userinfo = '', hostList = '', rest = ''] = m;
    const hosts = hostList.split(',');
    for (const h of hosts) if (new URL(`${scheme}${h}`).host === '') throw err;
    return new URL(`${scheme}${userinfo}${hosts[0]}${rest}`);
  }
}

function url(env: Env, name: string, schemes: string[], multiHost = false): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let parsed: URL;
  try {
    parsed = parseUrl(raw, multiHost);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${maskCredentials(raw)}"`);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, '')))
    throw new ConfigError(
      `${name} must be a ${schemes.map((x) => `${x}://`).join(' or ')} URL, got "${maskCredentials(raw)}"`,
    );
  return raw;
}

// HOST, DATA_DIR and MONGODB_DB say where to listen and where the data lives: set but empty is a
// mistake (an unset shell variable), not a request for the default, which could be another deployment's.
function setButBlank(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim();
  if (value === '') throw new ConfigError(`${name} is set but empty; unset it for the default ${fallback}`);
  return value;
}

const HOST_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** An IP literal, `localhost` or an RFC 1123 host name: checked by syntax only, never looked up. */
function host(env: Env): string {
  const value = setButBlank(env, 'HOST', '127.0.0.1');
  const unbracketed = /^\[.*\]$/.test(value) ? value.slice(1, -1) : value;
  if (isIP(unbracketed)) return unbracketed;
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const labels = name.split('.');
  // An all-digit last label is a mistyped IPv4 address (999.0.0.1), not a name.
  if (name.length <= 253 && labels.every((l) => HOST_LABEL.test(l)) && !/^\d+$/.test(labels.at(-1) ?? ''))
    return value;
  throw new ConfigError(
    `HOST must be an IP address, localhost or a host name (letters, digits, dashes and dots), got ${JSON.stringify(env.HOST)}`,
  );
}

/** 127.0.0.0/8, ::1 (also as ::ffff:127.x) or localhost: only this machine reaches it. */
function isLoopback(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(h);
}

function dataDir(env: Env): string {
  const dir = setButBlank(env, 'DATA_DIR', './data');
  if (dir.includes('\0')) throw new ConfigError('DATA_DIR must not contain a NUL character');
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new ConfigError(`DATA_DIR must be a directory, but ${JSON.stringify(dir)} is a file`);
  return dir;
}

/**
 * An existing DATA_DIR keeps the modes its operator gave it (src/core/data-dir-mode.ts), but SQLite
 * makes its files with the umask's (0644): in a directory other accounts may enter, any of them reads
 * keys.sqlite, every customer's key in clear. Said at every start, not refused (a deliberate setup,
 * an ACL, a container with one account).
 */
function openDataDir(dir: string): string | null {
  let mode: number;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch {
    return null; // made owner-only (0700) at start
  }
  if ((mode & 0o077) === 0) return null;
  return `DATA_DIR ${JSON.stringify(dir)} is open to other accounts (mode ${mode.toString(8).padStart(4, '0')}): its files, keys.sqlite among them (every customer's key in clear), are readable by them; make it owner-only: chmod 700 ${JSON.stringify(dir)}`;
}

/** The names MongoDB accepts on every platform: none of / \ . " $ space NUL, at most 63 bytes. */
function mongodbDb(env: Env): string {
  const name = setButBlank(env, 'MONGODB_DB', 'couvert');
  if (/[/\\. "$\0]/.test(name))
    throw new ConfigError(
      `MONGODB_DB must not contain / \\ . " $, spaces or NUL (MongoDB refuses them in a database name), got ${JSON.stringify(name)}`,
    );
  const bytes = Buffer.byteLength(name, 'utf8');
  if (bytes > 63) throw new ConfigError(`MONGODB_DB must be at most 63 bytes, got ${bytes}`);
  return name;
}

function bootstrapFile(env: Env): string | null {
  const file = env.BOOTSTRAP_FILE?.trim();
  if (!file) return null;
  if (!existsSync(file)) throw new ConfigError(`BOOTSTRAP_FILE ${JSON.stringify(file)} does not exist`);
  if (!statSync(file).isFile()) throw new ConfigError(`BOOTSTRAP_FILE ${JSON.stringify(file)} is not a file`);
  return file;
}

/**
 * BASE_URL is published (OpenAPI `servers`, links, the OAuth issuer, which RFC 8414 wants without query
 * or fragment): credentials in it would be served to anyone, and a query or fragment would end up in
 * the middle of every link built on it.
 */
function publicBaseUrl(env: Env): string | null {
  const raw = url(env, 'BASE_URL', ['http', 'https']);
  if (raw === null) return null;
  const parsed = new URL(raw);
  if (
    parsed.username ||
    parsed.password ||
    parsed.search ||
    parsed.hash ||
    raw.includes('?') ||
    raw.includes('#')
  )
    throw new ConfigError(
      `BASE_URL must be a plain URL (no user:password, query or fragment: it is published in links, OpenAPI and as the OAuth issuer), got "${maskCredentials(raw)}"`,
    );
  // In the URL's own spelling (scheme and host in small letters, no default port): https is told by the
  // scheme (the session cookie's Secure and __Host-, src/web/sessions.ts), and the OAuth issuer is
  // compared as a string with the URL a client fetched (RFC 8414 §3.3).
  return urlSpelling(parsed);
}

/**
 * A URL in its own spelling (scheme and host in small letters, no default port), as BASE_URL and the
 * default base URL are published.
 */
const urlSpelling = (parsed: URL): string => parsed.origin + parsed.pathname;

/** Scaled out every process must share one key, so it cannot be generated into a local directory. */
function secretsKeyOf(env: Env, store: Config['store']): Buffer | null {
  const raw = env.SECRETS_KEY;
  if (raw === undefined || raw === '') {
    if (store === 'eventstoredb')
      throw new ConfigError(
        'SECRETS_KEY must be set when STORE=eventstoredb (32 bytes as 64 hex characters or base64; e.g. `openssl rand -hex 32`): every process encrypts and reads webhook signing secrets with it',
      );
    return null;
  }
  const key = parseSecretsKey(raw);
  if (!key)
    throw new ConfigError(
      'SECRETS_KEY must be 32 bytes written as 64 hex characters or as base64 (44 characters)',
    );
  return key;
}

/** WHATSAPP_*: set WHATSAPP_ACCESS_TOKEN to send through the Cloud API; the others need it. */
function whatsapp(env: Env, warnings: string[]): WhatsAppConfig | null {
  const token = env.WHATSAPP_ACCESS_TOKEN;
  const others = [
    'WHATSAPP_API_BASE_URL',
    'WHATSAPP_API_VERSION',
    'WHATSAPP_TIMEOUT_MS',
    'WHATSAPP_MAX_RETRIES',
  ];
  if (token === undefined || token === '') {
    const set = others.filter((n) => env[n]);
    if (set.length)
      warnings.push(
        `${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but ignored: without WHATSAPP_ACCESS_TOKEN messages go to the outbox`,
      );
    return null;
  }
  if (token.trim() !== token || /\s/.test(token) || token.length < 8)
    throw new ConfigError('WHATSAPP_ACCESS_TOKEN must be a token of at least 8 characters without spaces');
  const version = env.WHATSAPP_API_VERSION?.trim() || 'v21.0';
  if (!/^v\d{1,3}\.\d{1,3}$/.test(version))
    throw new ConfigError(`WHATSAPP_API_VERSION must look like v21.0, got "${env.WHATSAPP_API_VERSION}"`);
  const base = url(env, 'WHATSAPP_API_BASE_URL', ['https', 'http']) ?? 'https://graph.facebook.com';
  const parsed = new URL(base);
  if (parsed.search || parsed.hash || parsed.username || parsed.password)
    throw new ConfigError('WHATSAPP_API_BASE_URL must be a plain URL (no query, fragment or credentials)');
  if (parsed.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname))
    throw new ConfigError('WHATSAPP_API_BASE_URL must be https (http only for a loopback test server)');
  return {
    accessToken: token,
    baseUrl: base.replace(/\/$/, ''),
    apiVersion: version,
    // At most 15 s: with its retries a send then ends well within the 60 s after which a replay takes
    // the call's processor for gone (commands/missed-calls/decide.ts IN_FLIGHT_MS).
    timeoutMs: integer(env, 'WHATSAPP_TIMEOUT_MS', 10_000, 100, 15_000),
    maxRetries: integer(env, 'WHATSAPP_MAX_RETRIES', 2, 0, 2),
  };
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const listenHost = host(env);
  const store = oneOf(env, 'STORE', ['embedded', 'eventstoredb'] as const, 'embedded');
  const eventstoreUrl = url(env, 'EVENTSTORE_URL', ['esdb', 'esdb+discover'], true);
  const mongodbUrl = url(env, 'MONGODB_URL', ['mongodb', 'mongodb+srv'], true);
  const mongodbName = mongodbDb(env);
  const warnings: string[] = [];
  if (store === 'eventstoredb' && (!eventstoreUrl || !mongodbUrl))
    throw new ConfigError(
      `STORE=eventstoredb needs EVENTSTORE_URL and MONGODB_URL (missing: ${[
        eventstoreUrl ? '' : 'EVENTSTORE_URL',
        mongodbUrl ? '' : 'MONGODB_URL',
      ]
        .filter(Boolean)
        .join(', ')})`,
    );
  if (store === 'embedded') {
    const ignored = ['EVENTSTORE_URL', 'MONGODB_URL', 'MONGODB_DB'].filter((n) => env[n]);
    if (ignored.length)
      warnings.push(
        `${ignored.join(', ')} ${ignored.length === 1 ? 'is' : 'are'} set but ignored: STORE is embedded (the log and read models live in DATA_DIR and in the process); set STORE=eventstoredb to use ${ignored.length === 1 ? 'it' : 'them'}`,
      );
  }
  const urlHost = isIP(listenHost) === 6 ? `[${listenHost}]` : listenHost;
  // The default in the same spelling as a BASE_URL given: PORT=80 gives no :80, HOST in capitals none.
  const baseUrl = (publicBaseUrl(env) ?? urlSpelling(new URL(`http://${urlHost}:${port}`))).replace(
    /\/$/,
    '',
  );
  const roleNames = (env.ROLES?.trim() || (store === 'embedded' ? 'api,projector,scheduler,webhooks' : 'api'))
    .split(',')
    .map((r) => r.trim());
  for (const r of roleNames)
    if (!(ROLES as readonly string[]).includes(r))
      throw new ConfigError(`ROLES must list ${ROLES.join(', ')}, got "${r}"`);
  const secretsKey = secretsKeyOf(env, store);
  reservationJobSettings(env);
  const dir = dataDir(env);
  const testClock = boolean(env, 'TEST_CLOCK', false);
  // POST /__test/clock takes no credential: whoever reaches the server moves its clock (tokens,
  // no-shows, retention). Meant for a test server on loopback.
  if (testClock && !isLoopback(listenHost))
    warnings.push(
      `TEST_CLOCK is true and HOST ${listenHost} is not a loopback address: anyone who reaches the server can move its clock forward (POST /__test/clock takes no credential); use it on 127.0.0.1 for tests only`,
    );
  if (store === 'embedded') {
    const open = openDataDir(dir);
    if (open) warnings.push(open);
  }
  return {
    port,
    host: listenHost,
    baseUrl,
    dataDir: dir,
    store,
    eventstoreUrl,
    mongodbUrl,
    mongodbDb: mongodbName,
    bootstrapFile: bootstrapFile(env),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000),
    oauthTokenRateLimitPerMinute: integer(env, 'OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE', 60, 1, 10_000_000),
    signInAttemptsPerIp: integer(env, 'SIGN_IN_RATE_LIMIT_PER_IP', 30, 1, 10_000_000),
    signInFailuresPerAccount: integer(env, 'SIGN_IN_FAILURES_PER_ACCOUNT', 10, 1, 10_000),
    webhookAllowPrivateTargets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    secretsKey,
    testClock,
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    readYourWritesTimeoutMs: integer(env, 'READ_YOUR_WRITES_TIMEOUT_MS', 2000, 0, 60_000),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    roles: new Set(roleNames as Role[]),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_000_000, 1024, 100_000_000),
    // Node's requestTimeout (300 s, counted from the request's start) cuts the connection unanswered:
    // the headers may take up to headersTimeout (66 s, src/app.ts) of it before the body is read, so
    // a deadline past 234 s could lose to it; 230 s leaves room for the middleware before the read.
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 30_000, 100, 230_000),
    importUploadsMaxBytes: integer(env, 'IMPORT_UPLOADS_MAX_BYTES', 100 * 1024 * 1024, 1024, 64 * 1024 ** 3),
    importThread: boolean(env, 'IMPORT_THREAD', true),
    whatsapp: whatsapp(env, warnings),
    warnings,
  };
}
