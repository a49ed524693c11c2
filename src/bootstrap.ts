// Applies a bootstrap file (DESIGN.md §3): restaurants with their configuration and API keys.
// Every change is an ordinary command; applying the same file twice appends nothing.
import { readFileSync } from 'node:fs';
import { checkScopes, checkToken } from '../commands/credentials/decide';
import { tokenClaimStream } from '../commands/credentials/events';
import { createApiKey, loadApiKey, updateApiKey } from '../commands/credentials/handler';
import { checkProfile, checkRestaurantId } from '../commands/restaurants/decide';
import { slugClaimStream } from '../commands/restaurants/events';
import {
  createRestaurant,
  loadRestaurant,
  resumeRestaurant,
  suspendRestaurant,
  updateRestaurant,
} from '../commands/restaurants/handler';
import type { CommandMeta } from './core/command-meta';
import { ApiError, type Issue } from './core/errors';
import { sha256 } from './core/ids';
import type { WriteDeps } from './core/write-deps';
import { parseJsonDocument } from './http/body-guard';
import { anyJson, arr, bool, type Infer, int, nullable, obj, optional, str } from './http/schema';
import { validateInput } from './http/validate';
import type { EventStore } from './ports/event-store';

const apiKey = obj({
  id: str({ min: 1, max: 64, pattern: /^[A-Za-z0-9_-]+$/ }),
  name: str({ min: 1, max: 200 }),
  token: str({ min: 8, max: 256 }),
  scopes: arr(str()),
});

const restaurant = obj(
  {
    id: str({ min: 1, max: 64 }),
    name: str({ min: 1, max: 200 }),
    slug: str({ min: 1, max: 64 }),
    country_code: str({ min: 2, max: 2 }),
    timezone: str({ min: 1 }),
    currency: str({ min: 3, max: 3 }),
    api_option: optional(bool()),
    suspended: optional(bool()),
    customer_matching: optional(bool()),
    features: optional(arr(str())),
    whatsapp_phone_number_id: optional(nullable(str({ min: 1, max: 32 }))),
    booking_url: optional(nullable(str({ min: 1, max: 2000 }))),
    follow_up_max_age_hours: optional(int({ min: 1, max: 168 })),
    api_keys: optional(arr(apiKey)),
    rooms: optional(arr(anyJson())),
    tables: optional(arr(anyJson())),
    shifts: optional(arr(anyJson())),
    prescribers: optional(arr(anyJson())),
    discounts: optional(arr(anyJson())),
    customer_fields: optional(arr(anyJson())),
    message_templates: optional(arr(anyJson())),
    webhook_endpoints: optional(arr(anyJson())),
  },
  { open: false },
);

export const bootstrapSchema = obj({
  restaurants: optional(arr(restaurant)),
  users: optional(arr(anyJson())),
  oauth_applications: optional(arr(anyJson())),
});

export type BootstrapFile = Infer<typeof bootstrapSchema>;
export type BootstrapRestaurant = Infer<typeof restaurant>;

/**
 * Sections applied by other modules (catalog, webhooks, OAuth) register here. The events an applier
 * appends through `deps` are counted in the report; `notes` say what it did or skipped.
 */
export type SectionApplier = (
  deps: WriteDeps,
  file: BootstrapFile,
  meta: CommandMeta,
) => Promise<{ notes: string[] }>;
/**
 * A section's checks, run for every section before anything of the file is applied (a file refused by
 * one section must not leave a restaurant created without its catalog, say): throws an Error naming
 * each problem's path in the file. It reads the log only; what the file itself creates first (the
 * restaurants, their API keys) is not there yet, so it looks for that in the file.
 */
export type SectionCheck = (deps: WriteDeps, file: BootstrapFile) => Promise<void>;
const appliers: SectionApplier[] = [];
const checks: SectionCheck[] = [];
export function registerBootstrapSection(applier: SectionApplier, check?: SectionCheck): void {
  appliers.push(applier);
  if (check) checks.push(check);
}

export interface BootstrapReport {
  /** Last position appended (null when the file changed nothing). */
  position: bigint | null;
  /** Every event appended, by this file's restaurants, keys and every registered section applier. */
  appended: number;
  notes: string[];
}

export function readBootstrapFile(path: string): BootstrapFile {
  let raw: unknown;
  try {
    raw = parseJsonDocument(readFileSync(path, 'utf8'));
  } catch (err) {
    const why = (err as Error).message;
    throw new Error(
      err instanceof SyntaxError || (err as NodeJS.ErrnoException).code
        ? `BOOTSTRAP_FILE ${path} is not readable JSON: ${why}`
        : `BOOTSTRAP_FILE ${path} is invalid: ${why}`,
    );
  }
  try {
    return validateInput(raw, bootstrapSchema, 'body');
  } catch (err) {
    if (err instanceof ApiError) {
      const issues = (err.details?.issues as { path: string; message: string }[]) ?? [];
      throw new Error(
        `BOOTSTRAP_FILE ${path} is invalid:\n${issues.map((i) => `  - ${i.path}: ${i.message}`).join('\n')}`,
      );
    }
    throw err;
  }
}

/** The same store, counting what is appended through it: the report counts every event, whoever appends it. */
function countingAppends(events: EventStore, seen: (count: number, position: bigint) => void): EventStore {
  return {
    kind: events.kind,
    async append(stream, batch, expected) {
      const result = await events.append(stream, batch, expected);
      seen(batch.length, result.position);
      return result;
    },
    readStream: (stream, options) => events.readStream(stream, options),
    readAll: (options) => events.readAll(options),
    subscribe: (options) => events.subscribe(options),
    headPosition: () => events.headPosition(),
    close: () => events.close(),
  };
}

/** Who holds a claim stream's value now (src/core/claims.ts), or null. */
async function claimOwner(deps: WriteDeps, stream: string): Promise<string | null> {
  const [last] = await deps.events.readStream(stream, { direction: 'backwards', limit: 1 });
  return last?.type === 'Claimed' ? (last.data as { owner: string }).owner : null;
}

/**
 * The restaurants and their API keys, checked before anything is applied: a file whose second
 * restaurant or second key is refused must not leave the first created, nor a restaurant without its
 * keys. Each problem names its path in the file (never a token's value).
 */
async function checkRestaurantsAndKeys(deps: WriteDeps, file: BootstrapFile): Promise<void> {
  const issues: Issue[] = [];
  const slugs = new Map<string, string>();
  const keyIds = new Map<string, string>();
  const tokens = new Map<string, string>();
  for (const [i, r] of (file.restaurants ?? []).entries()) {
    const at = `restaurants.${i}`;
    for (const issue of [...checkRestaurantId(r.id), ...checkProfile(r)])
      issues.push({ ...issue, path: `${at}.${issue.path}` });
    const slugOwner = slugs.get(r.slug) ?? (await claimOwner(deps, slugClaimStream(r.slug)));
    if (slugOwner !== null && slugOwner !== r.id)
      issues.push({
        path: `${at}.slug`,
        code: 'conflict',
        message: `slug ${r.slug} belongs to restaurant ${slugOwner}`,
      });
    slugs.set(r.slug, r.id);
    for (const [j, k] of (r.api_keys ?? []).entries()) {
      const kat = `${at}.api_keys.${j}`;
      try {
        checkScopes(k.scopes);
        checkToken(k.token);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        for (const issue of (err.details?.issues as Issue[] | undefined) ?? [])
          issues.push({ ...issue, path: `${kat}.${issue.path}` });
      }
      const stored = (await loadApiKey(deps, k.id)).key;
      const keyOwner = keyIds.get(k.id) ?? stored?.restaurant_id ?? null;
      if (keyOwner !== null && keyOwner !== r.id)
        issues.push({
          path: `${kat}.id`,
          code: 'conflict',
          message: `API key ${k.id} belongs to restaurant ${keyOwner}`,
        });
      keyIds.set(k.id, r.id);
      const hash = sha256(k.token);
      const tokenOwner = tokens.get(hash) ?? (await claimOwner(deps, tokenClaimStream(hash)));
      if (tokenOwner !== null && tokenOwner !== k.id)
        issues.push({
          path: `${kat}.token`,
          code: 'conflict',
          message: `this token is already API key ${tokenOwner}'s`,
        });
      tokens.set(hash, k.id);
    }
  }
  if (issues.length)
    throw new Error(
      `the bootstrap file's restaurants are invalid:\n${issues.map((x) => `  - ${x.path}: ${x.message}`).join('\n')}`,
    );
}

export async function applyBootstrap(
  outer: WriteDeps,
  file: BootstrapFile,
  meta: CommandMeta,
): Promise<BootstrapReport> {
  const report: BootstrapReport = { position: null, appended: 0, notes: [] };
  // The rest of `outer` (a Runtime's secrets, configuration) stays available to section appliers.
  const deps: WriteDeps = {
    ...outer,
    events: countingAppends(outer.events, (count, position) => {
      report.appended += count;
      if (report.position === null || position > report.position) report.position = position;
    }),
  };
  // Every section's checks before the first append: a refused file changes nothing.
  await checkRestaurantsAndKeys(outer, file);
  for (const check of checks) await check(outer, file);
  for (const r of file.restaurants ?? []) {
    const profile = {
      name: r.name,
      slug: r.slug,
      country_code: r.country_code,
      timezone: r.timezone,
      currency: r.currency,
      api_option: r.api_option ?? false,
      customer_matching: r.customer_matching ?? true,
      features: r.features ?? [],
    };
    const existing = await loadRestaurant(deps, r.id);
    if (existing.exists) await updateRestaurant(deps, r.id, profile, meta);
    else await createRestaurant(deps, r.id, profile, meta);
    if (r.suspended === true) await suspendRestaurant(deps, r.id, 'bootstrap file', meta);
    if (r.suspended === false && existing.suspended) await resumeRestaurant(deps, r.id, meta);
    for (const k of r.api_keys ?? []) {
      const key = { restaurantId: r.id, keyId: k.id, name: k.name, scopes: k.scopes, token: k.token };
      await createApiKey(deps, key, meta);
      await updateApiKey(deps, k.id, { name: k.name, scopes: k.scopes }, meta);
    }
  }
  for (const applier of appliers) report.notes.push(...(await applier(deps, file, meta)).notes);
  return report;
}
