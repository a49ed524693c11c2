// `analytics export`: a restaurant's analytics figures per service day (or per shift and day) as CSV
// or NDJSON on stdout (schema and columns: docs/analytics.md).
import { RESTAURANTS } from '../../projections/restaurants';
import { csvHeader, csvRow, figuresInRange, type Granularity } from '../../queries/analytics';
import { isDate } from '../core/datetime';
import { CliUsageError, optionalFlag, registerCliCommand, rejectUnknownFlags, requireFlag } from './registry';

export function registerAnalyticsCommands(): void {
  registerCliCommand({
    name: 'analytics export',
    summary: 'Print a restaurant’s analytics figures per service day (or shift and day) as CSV or NDJSON',
    usage: '--restaurant rest_x [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--format csv|ndjson] [--by day|shift]',
    async run(ctx) {
      rejectUnknownFlags(ctx, ['restaurant', 'from', 'to', 'format', 'by']);
      const restaurantId = requireFlag(ctx, 'restaurant');
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
      const by = optionalFlag(ctx, 'by') ?? 'day';
      if (by !== 'day' && by !== 'shift') throw new CliUsageError('--by takes day or shift');
      const restaurant = await ctx.rt.docs.collection(RESTAURANTS).findOne({ _id: restaurantId });
      if (!restaurant) throw new CliUsageError(`no restaurant ${restaurantId}`);
      if (format === 'csv') ctx.out(csvHeader());
      const rows = figuresInRange(ctx.rt.docs, { restaurantId, from, to, by: by as Granularity });
      for await (const figures of rows) ctx.out(format === 'csv' ? csvRow(figures) : JSON.stringify(figures));
    },
  });
}
