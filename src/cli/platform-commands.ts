// Platform commands: restaurants, API keys, bootstrap files and read models.
import { createApiKey, revokeApiKey, updateApiKey } from '../../commands/credentials/handler';
import type { ApiKeyDoc } from '../../projections/api-keys';
import { listKeys } from '../../queries/api-keys';
import { applyBootstrap, readBootstrapFile } from '../bootstrap';
import { operatorMeta } from '../core/command-meta';
import { scopesBeyondGrantOf } from './key-grants';
import { registerReadModelCommands } from './read-models-commands';
import {
  boolFlag,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
  requireFlag,
} from './registry';
import { registerRestaurantCommands } from './restaurant-commands';
import { optionalRestaurantFlag } from './restaurant-flag';
import { parseScopeList, SCOPE_ALL_HELP, SCOPE_LIST_USAGE } from './scope-list';

const meta = operatorMeta('cli');

export function registerPlatformCommands(): void {
  registerRestaurantCommands();
  registerCliCommand({
    name: 'keys create',
    summary: 'Create an API key; the token is printed once and stored hashed',
    usage: `--restaurant rest_x --name "POS" --scopes ${SCOPE_LIST_USAGE}   (${SCOPE_ALL_HELP})`,
    flags: ['restaurant', 'name', 'scopes'],
    async run(ctx) {
      const out = await createApiKey(
        ctx.rt,
        {
          restaurantId: requireFlag(ctx, 'restaurant'),
          name: requireFlag(ctx, 'name'),
          scopes: parseScopeList(requireFlag(ctx, 'scopes')),
        },
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(`key ${out.keyId} created. Token (shown once): ${out.token}`);
    },
  });
  registerCliCommand({
    name: 'keys list',
    summary:
      "List API keys (never their tokens); an OAuth token holding scopes beyond its manager's consent (widened by an earlier keys update) is marked",
    usage:
      '[--restaurant rest_x] [--json]   (columns: id, restaurant, type, hint, state, last used (hour resolution) or -, name, scopes, scopes beyond the grant or -)',
    flags: ['restaurant', 'json'],
    switches: ['json'],
    async run(ctx) {
      const json = boolFlag(ctx, 'json') === true;
      for (const k of await listKeys(ctx.rt.docs, await optionalRestaurantFlag(ctx))) {
        const beyond = await scopesBeyondGrantOf(ctx.rt, k);
        if (json) {
          ctx.out(
            JSON.stringify({
              id: k._id,
              restaurant_id: k.restaurant_id,
              type: k.type,
              token_hint: k.token_hint,
              application: k.application ?? null,
              revoked_at: k.revoked_at ?? null,
              cut_off_at: k.cut_off_at ?? null,
              last_used_at: k.last_used_at ?? null,
              name: k.name,
              scopes: k.scopes,
              scopes_beyond_grant: beyond,
            }),
          );
          continue;
        }
        ctx.out(
          `${k._id}\t${k.restaurant_id}\t${k.type}\t…${k.token_hint}\t${keyState(k)}\t${k.last_used_at ?? '-'}\t${k.name}\t${k.scopes.join(',')}\t${beyond.length ? `BEYOND GRANT: ${beyond.join(',')}` : '-'}`,
        );
      }
    },
  });
  registerCliCommand({
    name: 'keys update',
    summary:
      "Rename a key or replace its scopes (an OAuth token's only within what the restaurant's manager consented to: narrowed, or given back, never widened)",
    usage: `--id key_x [--name …] [--scopes ${SCOPE_LIST_USAGE}]   (${SCOPE_ALL_HELP}; an OAuth token's only within its grant)`,
    flags: ['id', 'name', 'scopes'],
    async run(ctx) {
      const scopes = optionalFlag(ctx, 'scopes');
      const out = await updateApiKey(
        ctx.rt,
        requireFlag(ctx, 'id'),
        { name: optionalFlag(ctx, 'name'), scopes: scopes ? parseScopeList(scopes) : undefined },
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
    flags: ['id', 'reason'],
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
    startsLog: true,
    async run(ctx) {
      rejectUnknownFlags(ctx, []);
      const [file, ...extra] = ctx.positionals;
      if (!file || extra.length) throw new CliUsageError('give one bootstrap file path');
      const report = await applyBootstrap(ctx.rt, readBootstrapFile(file), operatorMeta('bootstrap'));
      await ctx.rt.settle(report.position);
      ctx.out(
        report.appended
          ? `bootstrap ${file}: ${report.appended} event(s) appended`
          : `bootstrap ${file}: already applied, nothing appended`,
      );
      for (const n of report.notes) ctx.out(`note: ${n}`);
    },
  });
  registerReadModelCommands();
}

/**
 * A key's state as `keys list` prints it, by authentication's rule (keyWithdrawn): a token its
 * application's cut-off bars answers 401 whether or not the cut-off's sweep has revoked it yet.
 */
function keyState(k: Pick<ApiKeyDoc, 'revoked_at' | 'cut_off_at'>): string {
  if (k.revoked_at) return `REVOKED ${k.revoked_at}`;
  if (k.cut_off_at) return `CUT OFF ${k.cut_off_at}`;
  return 'active';
}
