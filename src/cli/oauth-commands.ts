// Operator commands for OAuth: applications, users, a restaurant's API option, connections. Secrets
// (client secrets, generated passwords) are printed once and stored hashed.
import { randomBytes } from 'node:crypto';
import {
  loadApplication,
  registerApplication,
  rotateClientSecret,
  setApplicationDisabled,
} from '../../commands/oauth/application-handler';
import type { ApplicationProfile } from '../../commands/oauth/events';
import { disconnectApplication } from '../../commands/oauth/token-handler';
import { createUser, loadUser, setRestaurantAccess } from '../../commands/oauth/user-handler';
import { updateRestaurant } from '../../commands/restaurants/handler';
import { listApplications, listConnections, restaurantsConnectedTo } from '../../queries/oauth';
import { operatorMeta } from '../core/command-meta';
import type { Scope } from '../core/scopes';
import {
  boolFlag,
  type CliContext,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
  requireFlag,
} from './registry';
import { restaurantFlag } from './restaurant-flag';
import { parseScopeList, SCOPE_ALL_HELP, SCOPE_LIST_USAGE } from './scope-list';

const meta = operatorMeta('cli');
const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function passwordFrom(ctx: CliContext): Promise<{ password: string; generated: boolean }> {
  if (ctx.flags['password-stdin'] === true) return { password: await readStdin(), generated: false };
  return { password: randomBytes(18).toString('base64url'), generated: true };
}

/** What a disconnection printed: the same for one restaurant and for every one (--disconnect). */
const disconnectedLine = (clientId: string, restaurant: string, revoked: readonly string[]) =>
  revoked.length
    ? `disconnected ${clientId} from ${restaurant}: revoked ${revoked.join(', ')}`
    : `${clientId} had no active token at ${restaurant}`;

/**
 * Disabling stops new authorizations and tokens only: the tokens an application holds keep working
 * (docs/OAUTH.md). An operator cutting off one that leaked its secret or misbehaves disconnects it from
 * every restaurant where it holds a token, as each restaurant's manager could: its tokens revoked, the
 * webhook endpoints they created deleted, a code issued before refused. Disabled first, so no new token
 * comes in meanwhile; that disabling is the cut-off, which already refuses every token issued before it
 * on each call (projections/api-keys.ts marks them): a token this sweep misses or has not reached yet
 * answers 401 all the same.
 */
async function disconnectEverywhere(ctx: CliContext, clientId: string): Promise<void> {
  const restaurants = await restaurantsConnectedTo(ctx.rt.docs, clientId);
  if (!restaurants.length) ctx.out(`${clientId} holds no active token at any restaurant`);
  for (const restaurant of restaurants) {
    const out = await disconnectApplication(ctx.rt, restaurant, clientId, meta);
    await ctx.rt.settle(out.position);
    ctx.out(disconnectedLine(clientId, restaurant, out.revoked));
  }
}

export function registerOAuthCommands(): void {
  registerCliCommand({
    name: 'applications register',
    summary: 'Register an OAuth application; prints its client_id and client_secret (once)',
    usage: `--name "Demo POS" --redirect-uris https://pos.example/cb[,…] --scopes ${SCOPE_LIST_USAGE} [--logo-url https://…] [--published-by-operator] [--client-id app_x]   (--scopes: what the application may ask a manager for; ${SCOPE_ALL_HELP})`,
    async run(ctx) {
      rejectUnknownFlags(ctx, [
        'name',
        'redirect-uris',
        'scopes',
        'logo-url',
        'published-by-operator',
        'client-id',
      ]);
      const profile: ApplicationProfile = {
        name: requireFlag(ctx, 'name'),
        redirect_uris: list(requireFlag(ctx, 'redirect-uris')),
        allowed_scopes: parseScopeList(requireFlag(ctx, 'scopes')) as Scope[],
        logo_url: optionalFlag(ctx, 'logo-url') ?? null,
        published_by_operator: boolFlag(ctx, 'published-by-operator') ?? false,
      };
      const out = await registerApplication(
        ctx.rt,
        { clientId: optionalFlag(ctx, 'client-id'), profile },
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(`client_id     ${out.clientId}`);
      ctx.out(`client_secret ${out.secret}`);
      ctx.out('The secret is shown once: it is stored only as a hash.');
    },
  });
  registerCliCommand({
    name: 'applications list',
    summary: 'List OAuth applications',
    usage: '',
    async run(ctx) {
      rejectUnknownFlags(ctx, []);
      for (const a of await listApplications(ctx.rt.docs))
        ctx.out(
          [
            a._id,
            a.name,
            a.published_by_operator ? 'operator' : 'third-party',
            a.disabled ? 'DISABLED' : 'enabled',
            a.allowed_scopes.join(','),
            a.redirect_uris.join(' '),
          ].join('\t'),
        );
    },
  });
  for (const [verb, disabled] of [
    ['disable', true],
    ['enable', false],
  ] as const)
    registerCliCommand({
      name: `applications ${verb}`,
      summary:
        verb === 'disable'
          ? 'Disable an application: no new authorizations or tokens (issued tokens stay until disconnected; --disconnect refuses them at once on every call and revokes them at every restaurant too)'
          : 'Enable a disabled application again',
      usage: verb === 'disable' ? '--client-id app_x [--disconnect]' : '--client-id app_x',
      async run(ctx) {
        rejectUnknownFlags(ctx, verb === 'disable' ? ['client-id', 'disconnect'] : ['client-id']);
        const id = requireFlag(ctx, 'client-id');
        const cutOff = verb === 'disable' && boolFlag(ctx, 'disconnect') === true;
        // Said from the state before: disabling again with --disconnect still records a new cut-off.
        const was = (await loadApplication(ctx.rt, id)).disabled;
        const out = await setApplicationDisabled(ctx.rt, id, disabled, meta, cutOff);
        await ctx.rt.settle(out.position);
        ctx.out(
          out.appended.length && was !== disabled
            ? `${verb}d application ${id}`
            : `application ${id} was already ${verb}d`,
        );
        if (cutOff) await disconnectEverywhere(ctx, id);
      },
    });
  registerCliCommand({
    name: 'applications rotate-secret',
    summary: 'Replace an application’s client_secret; prints the new one (once); the old one stops working',
    usage: '--client-id app_x',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['client-id']);
      const id = requireFlag(ctx, 'client-id');
      const out = await rotateClientSecret(ctx.rt, id, meta);
      await ctx.rt.settle(out.position);
      ctx.out(`client_secret ${out.secret}`);
    },
  });
  registerCliCommand({
    name: 'users create',
    summary: 'Create a user who signs in to the consent pages and the dashboard',
    usage:
      '--email manager@example.com [--password-stdin] (without it a password is generated and printed once)',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['email', 'password-stdin']);
      const email = requireFlag(ctx, 'email');
      const { password, generated } = await passwordFrom(ctx);
      const out = await createUser(ctx.rt, email, password, meta);
      await ctx.rt.settle(out.position);
      ctx.out(`created user ${out.state.email}`);
      if (generated)
        ctx.out(`password ${password}\nThe password is shown once: it is stored only as a hash.`);
    },
  });
  registerCliCommand({
    name: 'users grant',
    summary:
      'Let a user manage a restaurant’s integrations (or withdraw it with --manage-integrations false)',
    usage: '--email manager@example.com --restaurant rest_x [--manage-integrations true|false]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['email', 'restaurant', 'manage-integrations']);
      const email = requireFlag(ctx, 'email');
      const restaurant = requireFlag(ctx, 'restaurant');
      const manage = boolFlag(ctx, 'manage-integrations') ?? true;
      if (!(await loadUser(ctx.rt, email)).user_id) throw new CliUsageError(`no user has the email ${email}`);
      const out = await setRestaurantAccess(
        ctx.rt,
        email,
        { restaurant_id: restaurant, manage_integrations: manage },
        meta,
      );
      await ctx.rt.settle(out.position);
      ctx.out(
        out.appended.length
          ? `${email} ${manage ? 'manages' : 'no longer manages'} integrations of ${restaurant}`
          : `unchanged: ${email} ${manage ? 'already manages' : 'does not manage'} integrations of ${restaurant}`,
      );
    },
  });
  registerCliCommand({
    name: 'restaurants api-option',
    summary: 'Turn a restaurant’s API option on or off (third-party applications need it on)',
    usage: '--id rest_x --enabled true|false',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['id', 'enabled']);
      const id = requireFlag(ctx, 'id');
      const enabled = boolFlag(ctx, 'enabled');
      if (enabled === undefined) throw new CliUsageError('--enabled true|false is required');
      const out = await updateRestaurant(ctx.rt, id, { api_option: enabled }, meta);
      await ctx.rt.settle(out.position);
      ctx.out(`${id}: API option ${enabled ? 'on' : 'off'}${out.appended.length ? '' : ' (unchanged)'}`);
    },
  });
  registerCliCommand({
    name: 'connections list',
    summary:
      "The applications connected to a restaurant (active OAuth tokens), and whether the restaurant's API option pauses them",
    usage: '--restaurant rest_x [--json]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'json']);
      const id = await restaurantFlag(ctx);
      const rows = await listConnections(ctx.rt.docs, id);
      if (boolFlag(ctx, 'json') === true) {
        for (const c of rows) ctx.out(JSON.stringify(c));
        return;
      }
      if (!rows.length) ctx.out(`no application is connected to ${id}`);
      // A third-party application's tokens are kept while the API option is off, but answer 401 and
      // its endpoints receive nothing (queries/oauth.ts): the operator sees it, as the dashboard says.
      for (const c of rows)
        ctx.out(
          [
            c.client_id,
            c.name,
            `since ${c.connected_at}`,
            `${c.active_tokens} token(s)`,
            c.scopes.join(','),
            c.paused_by_api_option ? "paused: the restaurant's API option is off" : 'active',
            c.last_used_at ? `last used ${c.last_used_at}` : 'not used yet',
          ].join('\t'),
        );
    },
  });
  registerCliCommand({
    name: 'connections disconnect',
    summary: 'Disconnect an application from a restaurant: revokes every active token of it there',
    usage: '--restaurant rest_x --client-id app_x',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'client-id']);
      const restaurant = await restaurantFlag(ctx);
      const clientId = requireFlag(ctx, 'client-id');
      const out = await disconnectApplication(ctx.rt, restaurant, clientId, meta);
      await ctx.rt.settle(out.position);
      ctx.out(disconnectedLine(clientId, restaurant, out.revoked));
    },
  });
}
