// The registry mirror this project installs from lacks @biomejs/biome's binaries for other platforms,
// so `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock as out of
// sync. This adds the missing entries (platform-gated optional packages npm never fetches here).
// Run it after any `npm install` that rewrites the lock: node scripts/lock-biome-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const biome = lock.packages['node_modules/@biomejs/biome'];
if (!biome) process.exit(0);
const platform = (name) => {
  const [, os, cpu, libc] = /^@biomejs\/cli-(\w+)-(arm64|x64)(?:-(musl))?$/.exec(name) ?? [];
  return os ? { os, cpu, libc } : null;
};
let added = 0;
for (const name of Object.keys(biome.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  const p = platform(name);
  if (lock.packages[key] || !p) continue;
  lock.packages[key] = {
    version: biome.optionalDependencies[name],
    cpu: [p.cpu],
    dev: true,
    ...(p.os === 'linux' ? { libc: [p.libc ?? 'glibc'] } : {}),
    license: biome.license,
    optional: true,
    os: [p.os],
    engines: biome.engines,
  };
  added++;
}
const keys = Object.keys(lock.packages).sort((a, b) =>
  a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0,
);
lock.packages = Object.fromEntries(keys.map((k) => [k, lock.packages[k]]));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-biome-platforms: ${added} entr${added === 1 ? 'y' : 'ies'} added`);
