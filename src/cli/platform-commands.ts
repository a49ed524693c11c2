import { SingleBar } from 'cli-progress';
import { createApiKey, revokeApiKey, updateApiKey } from '../../commands/credentials/handler';
import type { RestaurantProfile } from '../../commands/restaurants/events';
import {
  createRestaurant,
  resumeRestaurant,
  suspendRestaurant,
  updateRestaurant,
} from '../../commands/restaurants/handler';
import { listKeys } from '../../queries/api-keys';
import { listRestaurants } from '../../queries/restaurants';
import { applyBootstrap, readBootstrapFile } from '../bootstrap';
import { operatorMeta } from '../core/command-meta';
import { SCOPES } from '../core/scopes';
import { ProjectionRunner } from '../projection/runner';
import { boolFlag, CliUsageError, optionalFlag, registerCliCommand, requireFlag } from './registry';

const meta = operatorMeta('cli');

function profileFlags(flags: Record<string, string | boolean>): Partial<RestaurantProfile> {
  const p: Partial<RestaurantProfile> = {};
  const s = (k: string) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  if (s('name') !== undefined) p.name = s('name');
  if (s('slug') !== undefined) p.slug = s('slug');
  if (s('country') !== undefined) p.country_code = s('country');
  if (s('timezone') !== undefined) p.timezone = s('timezone');
  if (s('currency') !== undefined) p.currency = s('currency');
  if (flags['api-option'] !== undefined)
    p.api_option = flags['api-option'] === true || flags['api-option'] === 'true';
  if (flags['customer-matching'] !== undefined)
    p.customer_matching = flags['customer-matching'] === true || flags['customer-matching'] === 'true';
  if (s('features') !== undefined) p.features = (s('features') as string).split(',').filter(Boolean);
  return p;
}

function parseScopes(raw: string): string[] {
  return raw === 'ALL'
    ? [...SCOPES]
    : raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
}

export function registerPlatformCommands(): void {
  registerCliCommand({
    name: 'restaurants create',
    summary: 'Create a restaurant',
    usage:
      '--id rest_x --name "Chez X" --slug chez-x --country FR --timezone Europe/Paris --currency EUR [--api-option] [--customer-matching false]',
    async run(ctx) {
      const id = requireFlag(ctx, 'id');
      const p = profileFlags(ctx.flags);
      for (const k of ['name', 'slug', 'country_code', 'timezone', 'currency'] as const)
        if (p[k] === undefined)
          throw new CliUsageError(`--${k === 'country_code' ? 'country' : k} is required`);
      const out = await createRestaurant(
        ctx.rt,
        id,
        {
          ...({ api_option: false, customer_matching: true, features: [] } as Partial<RestaurantProfile>),
          ...p,
        } as RestaurantProfile,
        meta,
      );
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
      const id = requireFlag(ctx, 'id');
      const out = await updateRestaurant(ctx.rt, id, profileFlags(ctx.flags), meta);
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? `updated restaurant ${id}` : `restaurant ${id} unchanged`);
    },
  });
  registerCliCommand({
    name: 'restaurants suspend',
    summary: 'Suspend a restaurant: its tokens answer 403 RESTAURANT_SUSPENDED',
    usage: '--id rest_x [--reason "…"]',
    async run(ctx) {
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
    async run(ctx) {
      for (const r of await listRestaurants(ctx.rt.docs))
        ctx.out(`${r._id}\t${r.slug}\t${r.name}\t${r.timezone}\t${r.suspended ? 'SUSPENDED' : 'active'}`);
    },
  });
  registerCliCommand({
    name: 'keys create',
    summary: 'Create an API key; the token is printed once and stored hashed',
    usage: '--restaurant rest_x --name "POS" --scopes CATALOG_READ,RESERVATIONS_READ|ALL',
    async run(ctx) {
      const out = await createApiKey(
        ctx.rt,
        {
          restaurantId: requireFlag(ctx, 'restaurant'),
          name: requireFlag(ctx, 'name'),
          scopes: parseScopes(requireFlag(ctx, 'scopes')),
        },
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(`key ${out.keyId} created. Token (shown once): ${out.token}`);
    },
  });
  registerCliCommand({
    name: 'keys list',
    summary: 'List API keys (never their tokens)',
    usage: '[--restaurant rest_x]',
    async run(ctx) {
      for (const k of await listKeys(ctx.rt.docs, optionalFlag(ctx, 'restaurant')))
        ctx.out(
          `${k._id}\t${k.restaurant_id}\t${k.type}\t…${k.token_hint}\t${k.revoked_at ? `REVOKED ${k.revoked_at}` : 'active'}\t${k.name}\t${k.scopes.join(',')}`,
        );
    },
  });
  registerCliCommand({
    name: 'keys update',
    summary: 'Rename a key or replace its scopes',
    usage: '--id key_x [--name …] [--scopes A,B|ALL]',
    async run(ctx) {
      const scopes = optionalFlag(ctx, 'scopes');
      const out = await updateApiKey(
        ctx.rt,
        requireFlag(ctx, 'id'),
        { name: optionalFlag(ctx, 'name'), scopes: scopes ? parseScopes(scopes) : undefined },
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? 'key updated' : 'key unchanged');
    },
  });
  registerCliCommand({
    name: 'keys revoke',
    summary: 'Revoke an API key: it fails on the very next request',
    usage: '--id key_x [--reason "…"]',
    async run(ctx) {
      const out = await revokeApiKey(
        ctx.rt,
        requireFlag(ctx, 'id'),
        optionalFlag(ctx, 'reason') ?? 'revoked by operator',
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(out.appended.length ? 'key revoked' : 'key was already revoked');
    },
  });
  registerCliCommand({
    name: 'bootstrap apply',
    summary: 'Apply a bootstrap file (applying it twice changes nothing)',
    usage: '<file.json>',
    async run(ctx) {
      const file = ctx.positionals[0];
      if (!file) throw new CliUsageError('give the bootstrap file path');
      const report = await applyBootstrap(ctx.rt, readBootstrapFile(file), operatorMeta('bootstrap'));
      await ctx.rt.settle(report.position);
      ctx.out(`${report.appended} change(s) applied`);
      for (const n of report.notes) ctx.out(`note: ${n}`);
    },
  });
  registerCliCommand({
    name: 'read-models rebuild',
    summary: 'Drop every read model and rebuild it from the event log',
    usage: '[--no-progress]',
    async run(ctx) {
      const { rt } = ctx;
      const head = await rt.events.headPosition();
      await rt.docs.dropAll();
      const bar = boolFlag(ctx, 'no-progress')
        ? null
        : new SingleBar({
            format: 'rebuild [{bar}] {percentage}% | {value}/{total} positions | {eta}s left',
          });
      bar?.start(Number(head ?? 0n), 0);
      const runner = new ProjectionRunner(rt.events, rt.docs, rt.projections.projections, {
        batchSize: 1000,
        onProgress: (_n, pos) => bar?.update(Number(pos)),
      });
      await runner.start();
      const started = Date.now();
      const applied = await runner.catchUp();
      bar?.stop();
      ctx.out(
        `rebuilt ${rt.projections.projections.length} read models from ${applied} events in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    },
  });
}
