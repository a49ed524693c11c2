// `restaurants …`: the operator creates, changes, suspends and resumes restaurants. Every refusal
// happens before anything is appended, and names the flag at fault.
import type { RestaurantProfile } from '../../commands/restaurants/events';
import {
  createRestaurant,
  loadRestaurant,
  resumeRestaurant,
  suspendRestaurant,
  updateRestaurant,
} from '../../commands/restaurants/handler';
import { listRestaurants } from '../../queries/restaurants';
import { operatorMeta } from '../core/command-meta';
import { ApiError, conflict, type Issue } from '../core/errors';
import {
  boolFlag,
  type CliContext,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
  requireFlag,
} from './registry';

const meta = operatorMeta('cli');

const FLAG_OF: Record<string, string> = {
  name: 'name',
  slug: 'slug',
  country_code: 'country',
  timezone: 'timezone',
  currency: 'currency',
  api_option: 'api-option',
  customer_matching: 'customer-matching',
  features: 'features',
};
const PROFILE_FLAGS = Object.values(FLAG_OF);
const REQUIRED = ['name', 'slug', 'country_code', 'timezone', 'currency'] as const;

function profileFlags(ctx: CliContext): Partial<RestaurantProfile> {
  const p: Record<string, unknown> = {};
  for (const [field, flag] of Object.entries(FLAG_OF)) {
    const value =
      field === 'api_option' || field === 'customer_matching' ? boolFlag(ctx, flag) : optionalFlag(ctx, flag);
    if (value === undefined) continue;
    p[field] = field === 'features' ? (value as string).split(',').filter(Boolean) : value;
  }
  return p as Partial<RestaurantProfile>;
}

/** The command's validation issues, named by the flags the operator typed rather than by event fields. */
async function withFlagNames<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const issues = err instanceof ApiError ? (err.details?.issues as Issue[] | undefined) : undefined;
    if (!issues?.length) throw err;
    throw new CliUsageError(
      `${(err as Error).message}:${issues.map((i) => `\n  --${FLAG_OF[i.path] ?? i.path}: ${i.message}`).join('')}`,
    );
  }
}

export function registerRestaurantCommands(): void {
  registerCliCommand({
    name: 'restaurants create',
    summary: 'Create a restaurant',
    usage:
      '--id rest_x --name "Chez X" --slug chez-x --country FR --timezone Europe/Paris --currency EUR [--api-option] [--customer-matching false] [--features A,B]',
    startsLog: true,
    async run(ctx) {
      rejectUnknownFlags(ctx, ['id', ...PROFILE_FLAGS]);
      const id = requireFlag(ctx, 'id');
      const p = profileFlags(ctx);
      const missing = REQUIRED.filter((k) => p[k] === undefined).map((k) => `--${FLAG_OF[k]}`);
      if (missing.length)
        throw new CliUsageError(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} required`);
      // Checked here because the handler claims the slug before it sees the restaurant exists.
      if ((await loadRestaurant(ctx.rt, id)).exists)
        throw conflict(`restaurant ${id} already exists (change it with: restaurants update --id ${id} …)`);
      const profile = { api_option: false, customer_matching: true, features: [], ...p } as RestaurantProfile;
      const out = await withFlagNames(() => createRestaurant(ctx.rt, id, profile, meta));
      await ctx.rt.settle(out.position);
      ctx.out(`created restaurant ${id}`);
    },
  });
  registerCliCommand({
    name: 'restaurants update',
    summary: 'Change a restaurant profile (only the flags given)',
    usage:
      '--id rest_x [--name …] [--slug …] [--country …] [--timezone …] [--currency …] [--api-option true|false] [--customer-matching true|false] [--features A,B]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['id', ...PROFILE_FLAGS]);
      const id = requireFlag(ctx, 'id');
      const changes = profileFlags(ctx);
      if (Object.keys(changes).length === 0)
        throw new CliUsageError(`give at least one of ${PROFILE_FLAGS.map((f) => `--${f}`).join(', ')}`);
      const out = await withFlagNames(() => updateRestaurant(ctx.rt, id, changes, meta));
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? `updated restaurant ${id}` : `restaurant ${id} unchanged`);
    },
  });
  registerCliCommand({
    name: 'restaurants suspend',
    summary: 'Suspend a restaurant: its tokens answer 403 RESTAURANT_SUSPENDED',
    usage: '--id rest_x [--reason "…"]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['id', 'reason']);
      const id = requireFlag(ctx, 'id');
      const out = await suspendRestaurant(ctx.rt, id, optionalFlag(ctx, 'reason') ?? null, meta);
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? `suspended restaurant ${id}` : `restaurant ${id} was already suspended`);
    },
  });
  registerCliCommand({
    name: 'restaurants resume',
    summary: 'Lift a suspension',
    usage: '--id rest_x',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['id']);
      const id = requireFlag(ctx, 'id');
      const out = await resumeRestaurant(ctx.rt, id, meta);
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? `resumed restaurant ${id}` : `restaurant ${id} was not suspended`);
    },
  });
  registerCliCommand({
    name: 'restaurants list',
    summary: 'List restaurants',
    usage: '',
    flags: [],
    async run(ctx) {
      for (const r of await listRestaurants(ctx.rt.docs))
        ctx.out(`${r._id}\t${r.slug}\t${r.name}\t${r.timezone}\t${r.suspended ? 'SUSPENDED' : 'active'}`);
    },
  });
}
