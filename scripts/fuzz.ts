// npm run fuzz [-- --requests N] [--seed S]: the fuzz suite's fuzzer (test/helpers/fuzz.ts) for a
// long run against an in-process service. Prints "sent N, failed N" and the first failures; exits 1
// when any request failed or the service no longer answers correctly afterwards.
import { parseArgs } from 'node:util';
import { assertStillServing, fuzzService, startFuzzTarget } from '../test/helpers/fuzz-service';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '50000' }, seed: { type: 'string' } },
});
const count = Number(values.requests);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isInteger(count) || count < 1 || !Number.isInteger(seed)) {
  console.error('usage: npm run fuzz -- [--requests N] [--seed S]');
  process.exit(2);
}

console.log(`fuzzing ${count} requests, seed ${seed}`);
const svc = await startFuzzTarget();
let code = 0;
try {
  const started = Date.now();
  const report = await fuzzService(svc, count, seed, (done) => {
    if (done % 1000 === 0) process.stderr.write(`  ${done}/${count}\n`);
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  for (const f of report.failures.slice(0, 20)) console.log(`FAIL ${f.why}\n     ${f.request}`);
  console.log(`statuses: ${JSON.stringify(report.statuses)}`);
  console.log(`signed page requests past sign-in: ${report.signedPast}`);
  console.log(`sent ${report.sent}, failed ${report.failed} (${seconds} s, seed ${seed})`);
  if (report.failed > 0) code = 1;
  try {
    await assertStillServing(svc);
    console.log('afterwards: no prototype polluted; create/read round trip OK');
  } catch (err) {
    console.log(`afterwards: the service is not whole: ${(err as Error).message}`);
    code = 1;
  }
} finally {
  await svc.close();
}
process.exit(code);
