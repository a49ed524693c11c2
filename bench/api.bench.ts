// `npm run bench`: the HTTP benchmarks, each against the real server in its own process.
import { platformBench } from './platform.bench';

const sections: { name: string; run: () => Promise<void> }[] = [{ name: 'platform', run: platformBench }];
for (const [name, file, fn] of [
  ['availability', './availability.bench', 'availabilityBench'],
  ['customers', './customers.bench', 'customersBench'],
  ['reservations', './reservations.bench', 'reservationsBench'],
  // 100,000-row customer CSV import inside the server while GET /reservations is served (3 runs).
  ['import', './customer-import.bench', 'importBench'],
  // Fills a store with 100,450 reservations first (about a minute), then creates for a minute more.
  ['full-store', './full-store.bench', 'fullStoreBench'],
] as const) {
  sections.push({
    name,
    run: async () => {
      const mod = (await import(file)) as Record<string, () => Promise<void>>;
      await (mod[fn] as () => Promise<void>)();
    },
  });
}

const only = process.argv.slice(2);
for (const s of sections) {
  if (only.length && !only.includes(s.name)) continue;
  console.log(`\n=== ${s.name} ===`);
  await s.run();
}
