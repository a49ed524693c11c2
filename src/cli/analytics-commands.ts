// `analytics export`: a restaurant's analytics figures per service day (or per shift and day) as CSV
// or NDJSON on stdout (schema and columns: docs/analytics.md); `--dataset webhooks|missed-calls`
// exports the webhook deliveries per endpoint and day, or the missed calls per day, instead.
import { csvHeader, csvRow, figuresInRange, type Granularity } from '../../queries/analytics';
import {
  csvHeaderOf,
  csvRowOf,
  MISSED_CALL_CSV_COLUMNS,
  missedCallDaysInRange,
  WEBHOOK_CSV_COLUMNS,
  webhookDaysInRange,
} from '../../queries/analytics-operations';
import { CSV_RECORD_END } from '../core/csv';
import { isDate } from '../core/datetime';
import { CliUsageError, optionalFlag, registerCliCommand, rejectUnknownFlags } from './registry';
import { restaurantFlag } from './restaurant-flag';

export function registerAnalyticsCommands(): void {
  registerCliCommand({
    name: 'analytics export',
    summary:
      'Print a restaurant’s analytics per day as CSV or NDJSON: reservations (per day or shift), webhook deliveries or missed calls',
    usage:
      '--restaurant rest_x [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format csv|ndjson] [--dataset reservations|webhooks|missed-calls] [--by day|shift]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'from', 'to', 'format', 'by', 'dataset']);
      const from = optionalFlag(ctx, 'from');
      const to = optionalFlag(ctx, 'to');
      for (const [flag, v] of [
        ['from', from],
        ['to', to],
      ] as const)
        if (v !== undefined && !isDate(v))
          throw new CliUsageError(`--${flag} takes a calendar date YYYY-MM-DD (got ${v})`);
      if (from && to && to < from) throw new CliUsageError(`--to (${to}) is before --from (${from})`);
      const format = optionalFlag(ctx, 'format') ?? 'csv';
      if (format !== 'csv' && format !== 'ndjson') throw new CliUsageError('--format takes csv or ndjson');
      const dataset = optionalFlag(ctx, 'dataset') ?? 'reservations';
      if (dataset !== 'reservations' && dataset !== 'webhooks' && dataset !== 'missed-calls')
        throw new CliUsageError('--dataset takes reservations, webhooks or missed-calls');
      const by = optionalFlag(ctx, 'by') ?? 'day';
      if (by !== 'day' && by !== 'shift') throw new CliUsageError('--by takes day or shift');
      if (by === 'shift' && dataset !== 'reservations')
        throw new CliUsageError(
          '--by shift is for --dataset reservations only (webhooks and missed calls are per day)',
        );
      // A mistyped id: "restaurant X not found", exit 1 (not a usage error, nor an empty export).
      const restaurantId = await restaurantFlag(ctx);
      if (dataset === 'webhooks') {
        if (format === 'csv') ctx.out(csvHeaderOf(WEBHOOK_CSV_COLUMNS), CSV_RECORD_END);
        for await (const d of webhookDaysInRange(ctx.rt.docs, { restaurantId, from, to }))
          if (format === 'csv') ctx.out(csvRowOf(WEBHOOK_CSV_COLUMNS, d), CSV_RECORD_END);
          else ctx.out(JSON.stringify(d));
        return;
      }
      if (dataset === 'missed-calls') {
        if (format === 'csv') ctx.out(csvHeaderOf(MISSED_CALL_CSV_COLUMNS), CSV_RECORD_END);
        for await (const d of missedCallDaysInRange(ctx.rt.docs, { restaurantId, from, to }))
          if (format === 'csv') ctx.out(csvRowOf(MISSED_CALL_CSV_COLUMNS, d), CSV_RECORD_END);
          else ctx.out(JSON.stringify(d));
        return;
      }
      if (format === 'csv') ctx.out(csvHeader(), CSV_RECORD_END);
      const rows = figuresInRange(ctx.rt.docs, { restaurantId, from, to, by: by as Granularity });
      for await (const figures of rows)
        if (format === 'csv') ctx.out(csvRow(figures), CSV_RECORD_END);
        else ctx.out(JSON.stringify(figures));
    },
  });
}
