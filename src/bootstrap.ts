// Applies a bootstrap file (DESIGN.md §3): restaurants with their configuration and API keys.
// Every change is an ordinary command; applying the same file twice appends nothing.
import { readFileSync } from 'node:fs';
import { createApiKey, updateApiKey } from '../commands/credentials/handler';
import {
  createRestaurant,
  loadRestaurant,
  resumeRestaurant,
  suspendRestaurant,
  updateRestaurant,
} from '../commands/restaurants/handler';
import type { CommandMeta } from './core/command-meta';
import { ApiError } from './core/errors';
import type { WriteDeps } from './core/write-deps';
import { anyJson, arr, bool, type Infer, nullable, obj, optional, str } from './http/schema';
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
const appliers: SectionApplier[] = [];
export function registerBootstrapSection(applier: SectionApplier): void {
  appliers.push(applier);
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
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`BOOTSTRAP_FILE ${path} is not readable JSON: ${(err as Error).message}`);
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
