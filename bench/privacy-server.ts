// The real service for bench/privacy-cost.bench.ts; with BENCH_UNSEALED=1 it runs without the
// sealing layer (personal data in clear in the log), to measure what sealing costs per request.
import { startService } from '../src/app';
import { loadConfig } from '../src/config';

const service = await startService(loadConfig(), {
  unsealedForBenchmark: process.env.BENCH_UNSEALED === '1',
});
console.log(`Couvert is listening on ${service.url}`);
const stop = () => service.stop().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
