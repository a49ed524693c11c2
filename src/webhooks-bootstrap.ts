// The bootstrap file's `webhook_endpoints` of each restaurant (DESIGN.md §3): endpoints that exist
// before any partner call, typically legacy ones (`api_version: "legacy"`) with a known secret. Each
// entry names the API key that owns it. Applying the file again changes what differs (url,
// description, events, headers; legacy → v1 is a migration, final) and appends nothing otherwise.
import { loadApiKey } from '../commands/credentials/handler';
import { refuseMalformedSettings } from '../commands/webhook-endpoints/decide';
import {
  createWebhookEndpoint,
  type EndpointDeps,
  loadWebhookEndpoint,
  migrateWebhookEndpoint,
  updateWebhookEndpoint,
} from '../commands/webhook-endpoints/handler';
import type { BootstrapFile, SectionApplier, SectionCheck } from './bootstrap';
import { ApiError, type Issue } from './core/errors';
import type { WriteDeps } from './core/write-deps';
import { arr, enums, obj, optional, record, str } from './http/schema';
import { validateInput } from './http/validate';
import { SECRET_PREFIX } from './webhooks/signature';

const entrySchema = obj({
  id: str({ min: 1, max: 64, pattern: /^[A-Za-z0-9_-]+$/ }),
  url: str({ min: 1, max: 2048 }),
  api_version: optional(enums(['legacy', 'v1'] as const)),
  secret: str({ min: SECRET_PREFIX.length + 1, max: 200, pattern: /^whsec_[A-Za-z0-9_-]+$/ }),
  api_key_id: str({ min: 1, max: 64 }),
  description: optional(str({ max: 500 })),
  enabled_events: optional(arr(str({ min: 1, max: 64 }), { min: 1, max: 20 })),
  headers: optional(record(str({ max: 1000 }))),
});

function issuesOf(err: unknown, prefix: string): Issue[] {
  if (!(err instanceof ApiError)) throw err;
  const issues = (err.details?.issues as Issue[] | undefined) ?? [
    { path: '', code: 'invalid', message: err.message },
  ];
  return issues.map((i) => ({ ...i, path: i.path ? `${prefix}.${i.path}` : prefix }));
}

type Plan = { restaurantId: string; entry: ReturnType<typeof entrySchema.struct.create>; scopes: string[] };

/**
 * Every entry checked, naming each problem's place in the file. `keysOfFile`: before the file is
 * applied (the check of every section), an API key the same restaurant entry declares counts too.
 */
async function planWebhookSections(
  deps: WriteDeps,
  file: BootstrapFile,
  keysOfFile: boolean,
): Promise<Plan[]> {
  const restaurants = file.restaurants ?? [];
  const issues: Issue[] = [];
  const plans: Plan[] = [];
  for (const [i, r] of restaurants.entries())
    for (const [j, raw] of (r.webhook_endpoints ?? []).entries()) {
      const at = `restaurants.${i}.webhook_endpoints.${j}`;
      try {
        const entry = validateInput(raw, entrySchema, 'body');
        // The endpoint rules (URL, headers, event types) here too, where each is named by its place in
        // the file and before any section is applied: met only by the create or update, they failed the
        // start with a bare 'The request body is invalid', after the file's earlier sections were applied.
        const config = (deps as Partial<EndpointDeps>).config;
        if (config) refuseMalformedSettings(entry, config.webhookAllowPrivateTargets);
        const declared = keysOfFile ? r.api_keys?.find((k) => k.id === entry.api_key_id) : undefined;
        const key = declared
          ? { key: { restaurant_id: r.id, scopes: declared.scopes } }
          : await loadApiKey(deps, entry.api_key_id);
        if (!key.key || key.key.restaurant_id !== r.id)
          issues.push({
            path: `${at}.api_key_id`,
            code: 'unknown_reference',
            message: `no API key ${entry.api_key_id} in restaurant ${r.id}`,
          });
        else plans.push({ restaurantId: r.id, entry, scopes: key.key.scopes });
      } catch (err) {
        issues.push(...issuesOf(err, at));
      }
    }
  if (issues.length)
    throw new Error(
      `the bootstrap file's webhook endpoints are invalid:\n${issues.map((x) => `  - ${x.path}: ${x.message}`).join('\n')}`,
    );
  return plans;
}

export const checkWebhookSections: SectionCheck = async (deps, file) => {
  await planWebhookSections(deps, file, true);
};

export const applyWebhookSections: SectionApplier = async (rawDeps, file, meta) => {
  const deps = rawDeps as EndpointDeps;
  if (!(file.restaurants ?? []).some((r) => r.webhook_endpoints?.length)) return { notes: [] };
  if (!deps.secrets || !deps.config) throw new Error('webhook_endpoints need the runtime (its secrets key)');
  const plans = await planWebhookSections(deps, file, false);
  let created = 0;
  let changed = 0;
  const notes: string[] = [];
  for (const { restaurantId, entry, scopes } of plans) {
    const existing = await loadWebhookEndpoint(deps, entry.id);
    const settings = {
      url: entry.url,
      description: entry.description ?? null,
      enabled_events: entry.enabled_events ?? ['*'],
      headers: entry.headers ?? {},
    };
    if (!existing.endpoint) {
      const out = await createWebhookEndpoint(
        deps,
        {
          ...settings,
          restaurantId,
          endpointId: entry.id,
          secret: entry.secret,
          apiVersion: entry.api_version ?? 'legacy',
          credential: { id: entry.api_key_id, scopes },
          // An endpoint of a key that reads nothing yet is kept: it receives what the key can read once granted.
          allowUnreadable: true,
          // The file is the operator's: counted against the limit, never refused by it.
          beyondLimit: true,
        },
        meta,
      );
      created += out.appended.length;
      continue;
    }
    if (existing.deleted) {
      notes.push(`webhook endpoint ${entry.id} was deleted; a deleted endpoint is not recreated`);
      continue;
    }
    changed += (
      await updateWebhookEndpoint(deps, restaurantId, entry.id, settings, scopes, meta, {
        allowUnreadable: true,
      })
    ).appended.length;
    if (entry.api_version === 'v1')
      changed += (await migrateWebhookEndpoint(deps, restaurantId, entry.id, meta)).appended.length;
    else if (existing.endpoint.api_version === 'v1')
      notes.push(`webhook endpoint ${entry.id} was migrated to v1; migration is final, it stays v1`);
  }
  if (created || changed) notes.push(`webhook endpoints: ${created} created, ${changed} change(s)`);
  return { notes };
};
