// `missed-calls list`, `messages list`, `missed-calls configure`: operators see a restaurant's missed
// calls and the messages sent (or recorded in the outbox) for them, and set its WhatsApp settings.
import {
  configureSettings,
  loadSettings,
  type MissedCallSettings,
} from '../../commands/missed-calls/settings';
import { listCallsForOperator, listMessages, presentCall } from '../../queries/missed-calls';
// A partner's free text (an external_call_id, a guest's name in a message) holding a new line or a tab
// would print as a row of its own, one an operator cannot tell from a real call or message.
import { printable } from '../audit/changes';
import { operatorMeta } from '../core/command-meta';
import { ApiError, type Issue } from '../core/errors';
import {
  type CliContext,
  CliUsageError,
  optionalFlag,
  registerCliCommand,
  rejectUnknownFlags,
} from './registry';
import { restaurantFlag } from './restaurant-flag';

const meta = operatorMeta('cli');

function limitFlag(ctx: CliContext): number {
  const raw = optionalFlag(ctx, 'limit') ?? '50';
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 10_000)
    throw new CliUsageError('--limit takes an integer from 1 to 10000');
  return Number(raw);
}

/** `none` clears a setting. */
const setting = (ctx: CliContext, flag: string): string | null | undefined => {
  const v = optionalFlag(ctx, flag);
  return v === undefined ? undefined : v === 'none' ? null : v;
};

export function registerMissedCallCommands(): void {
  registerCliCommand({
    name: 'missed-calls list',
    summary: "List a restaurant's missed calls, newest first (outcome, caller, customer, reservation)",
    usage: '--restaurant rest_x [--limit 50] [--json]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'limit', 'json']);
      const id = await restaurantFlag(ctx);
      const calls = await listCallsForOperator(ctx.rt.docs, id, limitFlag(ctx));
      if (ctx.flags.json) {
        for (const c of calls) ctx.out(JSON.stringify(presentCall(c)));
        return;
      }
      if (!calls.length) return ctx.out(`no missed calls for ${id}`);
      ctx.out(
        [
          'occurred_at',
          'id',
          'outcome',
          'caller',
          'customer',
          'reservation',
          'template',
          'external_call_id',
        ].join('\t'),
      );
      for (const c of calls.map(presentCall))
        ctx.out(
          [
            c.occurred_at,
            c.id,
            c.outcome,
            c.caller_phone_number ?? '[erased]',
            c.customer_id ?? '-',
            c.reservation_id ?? '-',
            c.template_type ?? '-',
            c.external_call_id === null ? '-' : printable(c.external_call_id),
          ].join('\t'),
        );
    },
  });
  registerCliCommand({
    name: 'messages list',
    summary:
      "List a restaurant's missed-call messages, newest first (outbox ones say nothing left the machine)",
    usage: '--restaurant rest_x [--limit 50] [--json]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'limit', 'json']);
      const id = await restaurantFlag(ctx);
      const messages = await listMessages(ctx.rt.docs, id, limitFlag(ctx));
      if (ctx.flags.json) {
        for (const { _pos, ...m } of messages) ctx.out(JSON.stringify(m));
        return;
      }
      if (!messages.length) return ctx.out(`no messages for ${id}`);
      for (const m of messages) {
        const where =
          m.status === 'SENT'
            ? m.left_machine
              ? `sent via ${m.provider} (${m.provider_message_id})`
              : 'recorded in the outbox: nothing left the machine'
            : m.status === 'REQUESTED'
              ? 'asked of the provider, no answer recorded yet'
              : `${m.status.toLowerCase()}: ${m.error ?? ''}`;
        ctx.out(
          printable(
            `${m.requested_at}  ${m._id}  to ${m.to ?? '[erased]'}  ${m.template_name} (${m.language})  call ${m.missed_call_id}  ${where}`,
          ),
        );
        ctx.out(`    ${m.text === null ? '[erased]' : printable(m.text)}`);
      }
    },
  });
  registerCliCommand({
    name: 'missed-calls configure',
    summary:
      "Set a restaurant's WhatsApp sending number id and booking link (`none` clears) and how many hours after a call a follow-up is still sent (default 24); no flag prints them",
    usage:
      '--restaurant rest_x [--whatsapp-phone-number-id 106540352242922|none] [--booking-url https://…|none] [--follow-up-max-age-hours 1-168]',
    async run(ctx) {
      rejectUnknownFlags(ctx, [
        'restaurant',
        'whatsapp-phone-number-id',
        'booking-url',
        'follow-up-max-age-hours',
      ]);
      const id = await restaurantFlag(ctx);
      const changes: Partial<MissedCallSettings> = {};
      const phoneId = setting(ctx, 'whatsapp-phone-number-id');
      const url = setting(ctx, 'booking-url');
      if (phoneId !== undefined) changes.whatsapp_phone_number_id = phoneId;
      if (url !== undefined) changes.booking_url = url;
      const maxAge = optionalFlag(ctx, 'follow-up-max-age-hours');
      if (maxAge !== undefined) {
        if (!/^\d{1,4}$/.test(maxAge))
          throw new CliUsageError('--follow-up-max-age-hours takes a whole number of hours from 1 to 168');
        changes.follow_up_max_age_hours = Number(maxAge);
      }
      if (!Object.keys(changes).length) {
        ctx.out(JSON.stringify(await loadSettings(ctx.rt, id), null, 2));
        return;
      }
      try {
        const out = await configureSettings(ctx.rt, id, changes, meta);
        await ctx.rt.settle(out.position);
        ctx.out(
          out.appended.length
            ? `missed-call settings of ${id} updated`
            : `missed-call settings of ${id} unchanged`,
        );
      } catch (err) {
        const issues = err instanceof ApiError ? (err.details?.issues as Issue[] | undefined) : undefined;
        if (!issues?.length) throw err;
        throw new CliUsageError(issues.map((i) => `--${i.path.replace(/_/g, '-')}: ${i.message}`).join('\n'));
      }
    },
  });
}
