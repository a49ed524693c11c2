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
import { anyJson, arr, bool, type Infer, obj, optional, str } from './http/schema';
import { validateInput } from './http/validate';

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

/** Sections applied by other modules (catalog, webhooks, OAuth) register here. */
export type SectionApplier = (
  deps: WriteDeps,
  file: BootstrapFile,
  meta: CommandMeta,
) => Promise<{ positions: bigint[]; notes: string[] }>;
const appliers: SectionApplier[] = [];
export function registerBootstrapSection(applier: SectionApplier): void {
  appliers.push(applier);
}

export interface BootstrapReport {
  /** Last position appended (null when the file changed nothing). */
  position: bigint | null;
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

export async function applyBootstrap(
  deps: WriteDeps,
  file: BootstrapFile,
  meta: CommandMeta,
): Promise<BootstrapReport> {
  const report: BootstrapReport = { position: null, appended: 0, notes: [] };
  const track = (o: { position: bigint | null; appended?: unknown[] }) => {
    if (o.position !== null && (report.position === null || o.position > report.position))
      report.position = o.position;
    report.appended += o.appended?.length ?? (o.position !== null ? 1 : 0);
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
    track(
      existing.exists
        ? await updateRestaurant(deps, r.id, profile, meta)
        : await createRestaurant(deps, r.id, profile, meta),
    );
    if (r.suspended === true) track(await suspendRestaurant(deps, r.id, 'bootstrap file', meta));
    if (r.suspended === false && existing.suspended) track(await resumeRestaurant(deps, r.id, meta));
    for (const k of r.api_keys ?? []) {
      const created = await createApiKey(
        deps,
        { restaurantId: r.id, keyId: k.id, name: k.name, scopes: k.scopes, token: k.token },
        meta,
      );
      track(created);
      track(await updateApiKey(deps, k.id, { name: k.name, scopes: k.scopes }, meta));
    }
  }
  for (const [section, count] of [
    ['users', file.users?.length ?? 0],
    ['oauth_applications', file.oauth_applications?.length ?? 0],
  ] as const)
    if (count && !appliers.length)
      report.notes.push(
        `${section}: ${count} entr${count === 1 ? 'y' : 'ies'} read but not applied (the OAuth module is not built yet)`,
      );
  for (const applier of appliers) {
    const out = await applier(deps, file, meta);
    for (const p of out.positions) track({ position: p });
    report.notes.push(...out.notes);
  }
  return report;
}
