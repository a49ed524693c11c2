// `npm ci` on a clean machine refuses a lock that misses optional platform packages; this catches it
// before CI does (see scripts/lock-biome-platforms.mjs).
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

test('package-lock lists every optional dependency of every locked package', () => {
  const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8'));
  const missing: string[] = [];
  for (const [key, entry] of Object.entries(
    lock.packages as Record<string, { optionalDependencies?: Record<string, string> }>,
  )) {
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) {
      const nested = `${key}/node_modules/${dep}`;
      if (!lock.packages[`node_modules/${dep}`] && !lock.packages[nested])
        missing.push(`${dep} (of ${key || 'the project'})`);
    }
  }
  assert.equal(
    missing,
    [],
    `run node scripts/lock-biome-platforms.mjs, or npm install again: ${missing.join(', ')}`,
  );
});

test.run();
