// The real service, plus one thing for the import benchmark: on SIGUSR2 it imports IMPORT_FILE into
// IMPORT_RESTAURANT in-process (as the dashboard will), beside the requests it serves, and writes
// the outcome to DATA_DIR/import-result.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startService } from '../src/app';
import { loadConfig } from '../src/config';
import { operatorMeta } from '../src/core/command-meta';
import { importCustomers, prepareImport } from '../src/customer-import/engine';
import { clockTicks } from './harness';

const config = loadConfig();
const service = await startService(config);
console.log(`Couvert is listening on ${service.url}`);

/** CPU seconds of the main thread alone (Linux): the process's figure also counts the import's
 * worker thread and V8's helper threads. */
function mainThreadCpu(): number | null {
  try {
    const fields =
      readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

process.on('SIGUSR2', () => {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const main0 = mainThreadCpu();
  // How long the event loop was held while the import ran: what a request arriving then waited.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  (async () => {
    const bytes = readFileSync(process.env.IMPORT_FILE as string);
    const prepared = await prepareImport(service.rt, process.env.IMPORT_RESTAURANT as string, bytes);
    const state = await importCustomers(service.rt, prepared, {
      onMatch: 'return_existing',
      fileName: 'bench.csv',
      meta: operatorMeta('bench'),
      batchSize: process.env.IMPORT_BATCH ? Number(process.env.IMPORT_BATCH) : undefined,
    });
    const used = process.cpuUsage(cpu);
    delay.disable();
    return {
      loop_delay_ms: {
        p50: delay.percentile(50) / 1e6,
        p99: delay.percentile(99) / 1e6,
        max: delay.max / 1e6,
      },
      seconds: (performance.now() - started) / 1000,
      cpu_seconds: (used.user + used.system) / 1e6,
      main_thread_cpu_seconds: main0 === null ? null : (mainThreadCpu() as number) - main0,
      rows: prepared.table.rows.length,
      status: state.status,
      counts: state.counts,
    };
  })().then(
    (result) => writeFileSync(join(config.dataDir, 'import-result.json'), JSON.stringify(result)),
    (err) =>
      writeFileSync(join(config.dataDir, 'import-result.json'), JSON.stringify({ error: String(err) })),
  );
});

const stop = () => service.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
