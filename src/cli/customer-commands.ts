// Operator commands on customers: blacklist, marketing opt-outs, merge, delete, channel drafts. Each
// runs the ordinary command handler (an event in the customer's stream) and waits for the read model.
import { OPT_OUT_CHANNELS, type OptOutChannel } from '../../commands/customers/events';
import {
  addMarketingOptOut,
  blacklistCustomer,
  clearCustomerBlacklist,
  deleteCustomer,
  flagCustomerDraft,
  publishCustomerDraft,
  removeMarketingOptOut,
} from '../../commands/customers/handler';
import { mergeCustomers } from '../../commands/customers/merge';
import { type RelinkOutcome, relinkLeftover } from '../../commands/reservations/relink';
import { CUSTOMERS, type CustomerDoc } from '../../projections/customer-docs';
import { presentCustomer } from '../../queries/customer-presenter';
import { operatorMeta } from '../core/command-meta';
import { notFound } from '../core/errors';
import { type CliContext, CliUsageError, optionalFlag, registerCliCommand, requireFlag } from './registry';

const meta = operatorMeta('cli');

function channel(ctx: CliContext): OptOutChannel {
  const c = requireFlag(ctx, 'channel').toUpperCase();
  if (!(OPT_OUT_CHANNELS as readonly string[]).includes(c))
    throw new CliUsageError(`--channel takes ${OPT_OUT_CHANNELS.join(' or ')}`);
  return c as OptOutChannel;
}

/** Registers a command that changes one customer and reports whether anything changed. */
function single(
  name: string,
  summary: string,
  usage: string,
  flags: readonly string[],
  run: (
    ctx: CliContext,
    id: string,
  ) => Promise<{ appended: unknown[]; position: bigint | null; relinked?: RelinkOutcome | null }>,
  done: string,
  unchanged: string,
): void {
  registerCliCommand({
    name,
    summary,
    usage,
    flags,
    async run(ctx) {
      const id = requireFlag(ctx, 'id');
      const out = await run(ctx, id);
      await ctx.rt.settle(out.position);
      // The change is committed: reservations left unrecorded are told, not an error.
      const left = relinkLeftover(out.relinked);
      ctx.out(`customer ${id} ${out.appended.length ? done : unchanged}${left ? `; ${left}` : ''}`);
    },
  });
}

export function registerCustomerCommands(): void {
  registerCliCommand({
    name: 'customers show',
    summary: 'Print a customer as partners see it (drafts included)',
    usage: '--id cus_x',
    flags: ['id'],
    async run(ctx) {
      const id = requireFlag(ctx, 'id');
      const doc = await ctx.rt.docs.collection<CustomerDoc>(CUSTOMERS).findOne({ _id: id });
      if (!doc) throw notFound(`customer ${id}`);
      ctx.out(
        JSON.stringify(
          { ...presentCustomer(doc), restaurant_id: doc.restaurant_id, draft: doc.draft },
          null,
          2,
        ),
      );
    },
  });
  single(
    'customers blacklist',
    'Blacklist a customer: their new reservations are rejected',
    '--id cus_x [--reason "…"]',
    ['id', 'reason'],
    (ctx, id) => blacklistCustomer(ctx.rt, id, optionalFlag(ctx, 'reason') ?? null, meta),
    'blacklisted',
    'was already blacklisted',
  );
  single(
    'customers unblacklist',
    'Clear a customer from the blacklist',
    '--id cus_x',
    ['id'],
    (ctx, id) => clearCustomerBlacklist(ctx.rt, id, meta),
    'cleared from the blacklist',
    'was not blacklisted',
  );
  single(
    'customers opt-out',
    'Record that marketing must not be sent on a channel (unsubscribed, bounced, blocked)',
    '--id cus_x --channel EMAIL|WHATSAPP [--reason "…"]',
    ['id', 'channel', 'reason'],
    (ctx, id) => addMarketingOptOut(ctx.rt, id, channel(ctx), optionalFlag(ctx, 'reason') ?? null, meta),
    'opted out',
    'had already opted out on that channel',
  );
  single(
    'customers opt-in',
    'Remove a marketing opt-out',
    '--id cus_x --channel EMAIL|WHATSAPP',
    ['id', 'channel'],
    (ctx, id) => removeMarketingOptOut(ctx.rt, id, channel(ctx), meta),
    'no longer opted out on that channel',
    'was not opted out on that channel',
  );
  single(
    'customers delete',
    'Delete a customer (it disappears from the API and the sync feed)',
    '--id cus_x [--reason "…"]',
    ['id', 'reason'],
    (ctx, id) => deleteCustomer(ctx.rt, id, optionalFlag(ctx, 'reason') ?? null, meta),
    'deleted',
    'was already deleted',
  );
  single(
    'customers draft',
    'Hide a customer from partners as a messaging-channel draft',
    '--id cus_x [--channel WHATSAPP]',
    ['id', 'channel'],
    (ctx, id) => flagCustomerDraft(ctx.rt, id, optionalFlag(ctx, 'channel') ?? 'OPERATOR', meta),
    'is now a draft',
    'was already a draft',
  );
  single(
    'customers publish',
    'Publish a draft customer to partners',
    '--id cus_x',
    ['id'],
    (ctx, id) => publishCustomerDraft(ctx.rt, id, meta),
    'published',
    'was not a draft',
  );
  registerCliCommand({
    name: 'customers merge',
    summary: 'Merge a customer into another of the same restaurant (the first disappears)',
    usage: '--from cus_duplicate --into cus_kept',
    flags: ['from', 'into'],
    async run(ctx) {
      const from = requireFlag(ctx, 'from');
      const into = requireFlag(ctx, 'into');
      const out = await mergeCustomers(ctx.rt, from, into, meta);
      const last = out.relinked.position ?? out.position;
      await ctx.rt.settle(
        out.position !== null && last !== null && out.position > last ? out.position : last,
      );
      // The merge is committed: reservations left unrecorded are told, not an error.
      const left = relinkLeftover(out.relinked);
      ctx.out(
        `${
          out.position === null
            ? `customer ${from} was already merged into ${into}`
            : `merged ${from} into ${into}`
        }${left ? `; ${left}` : ''}`,
      );
      // Their reservations record that they now show the survivor (updated_at, history, webhooks).
      if (out.relinked.relinked > 0)
        ctx.out(`${out.relinked.relinked} reservation(s) of ${from} now show ${into}`);
    },
  });
}
