// Every environment variable of DESIGN.md §3, read and validated once at start. A bad value stops the
// start with a message naming the variable.

// The webhook publisher role joins this list when it exists; until then asking for it is an error,
// not a role that silently runs nothing.
export const ROLES = ['api', 'projector', 'scheduler'] as const;
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
  webhookAllowPrivateTargets: boolean;
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

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['false', '0', 'no'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function url(env: Env, name: string, schemes: string[]): string | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, '')))
    throw new ConfigError(`${name} must use ${schemes.join(' or ')}, got "${parsed.protocol}"`);
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST?.trim() || '127.0.0.1';
  const store = oneOf(env, 'STORE', ['embedded', 'eventstoredb'] as const, 'embedded');
  const eventstoreUrl = url(env, 'EVENTSTORE_URL', ['esdb', 'esdb+discover']);
  const mongodbUrl = url(env, 'MONGODB_URL', ['mongodb', 'mongodb+srv']);
  if (store === 'eventstoredb' && (!eventstoreUrl || !mongodbUrl))
    throw new ConfigError('STORE=eventstoredb needs EVENTSTORE_URL and MONGODB_URL');
  const baseUrl = (url(env, 'BASE_URL', ['http', 'https']) ?? `http://${host}:${port}`).replace(/\/$/, '');
  const roleNames = (env.ROLES?.trim() || (store === 'embedded' ? 'api,projector,scheduler' : 'api'))
    .split(',')
    .map((r) => r.trim());
  for (const r of roleNames)
    if (!(ROLES as readonly string[]).includes(r))
      throw new ConfigError(
        r === 'webhooks'
          ? 'ROLES=webhooks: the webhook publisher is not built yet'
          : `ROLES must list ${ROLES.join(', ')}, got "${r}"`,
      );
  return {
    port,
    host,
    baseUrl,
    dataDir: env.DATA_DIR?.trim() || './data',
    store,
    eventstoreUrl,
    mongodbUrl,
    mongodbDb: env.MONGODB_DB?.trim() || 'couvert',
    bootstrapFile: env.BOOTSTRAP_FILE?.trim() || null,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000),
    oauthTokenRateLimitPerMinute: integer(env, 'OAUTH_TOKEN_RATE_LIMIT_PER_MINUTE', 60, 1, 10_000_000),
    webhookAllowPrivateTargets: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    testClock: boolean(env, 'TEST_CLOCK', false),
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
  };
}
