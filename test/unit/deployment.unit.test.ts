// The scaled-out deployment as docker-compose.yml and the Dockerfile describe it, checked by reading
// them (no container runtime runs here): what `docker compose up` would start must be able to work.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ESDB_MAX_APPEND_SIZE } from '../helpers/containers';

const root = join(dirname(new URL(import.meta.url).pathname), '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const compose = read('docker-compose.yml');

/**
 * The environment of each service (`x-couvert` for the shared block): a reading of the YAML subset
 * docker-compose.yml uses (block mappings, `KEY: value` lines under `environment:`).
 */
function environments(text: string): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  let service: string | null = null;
  let envIndent = -1;
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const indent = line.length - line.trimStart().length;
    const top = /^([\w-]+):/.exec(line);
    if (top) {
      service = top[1] === 'x-couvert' ? 'x-couvert' : null;
      envIndent = -1;
      continue;
    }
    const named = /^ {2}([\w-]+):\s*$/.exec(line);
    if (named && indent === 2 && service !== 'x-couvert') {
      service = named[1]!;
      envIndent = -1;
      continue;
    }
    if (envIndent >= 0 && indent <= envIndent) envIndent = -1;
    if (/^\s+environment:/.test(line)) {
      envIndent = indent;
      continue;
    }
    const entry = /^\s+([A-Z][A-Z0-9_]*):\s*(.*)$/.exec(line);
    if (envIndent >= 0 && entry && service) {
      const env = out.get(service) ?? new Map<string, string>();
      env.set(entry[1]!, entry[2]!.replace(/^"(.*)"$/, '$1'));
      out.set(service, env);
    }
  }
  return out;
}

const envs = environments(compose);

test('every variable compose gives the service is one the service reads (src/config.ts, the jobs)', () => {
  const readers = [read('src/config.ts'), read('src/scheduler.ts')].join('\n');
  const own = ['x-couvert', 'api', 'projector', 'webhooks'];
  const names = own.flatMap((s) => [...(envs.get(s)?.keys() ?? [])]);
  assert.ok(names.includes('STORE') && names.includes('ROLES'), `found ${names.join(', ')}`);
  for (const name of names) assert.ok(new RegExp(`\\b${name}\\b`).test(readers), `${name} is read by nobody`);
  assert.is(envs.get('x-couvert')?.get('STORE'), 'eventstoredb');
  for (const s of ['api', 'projector', 'webhooks'])
    assert.ok(envs.get(s)?.get('ROLES'), `${s} names its roles`);
});

test('MongoDB is reported healthy only once it is a writable primary', () => {
  const check = /^ {2}mongodb:[\s\S]*?healthcheck:[\s\S]*?test:([\s\S]*?)interval:/m.exec(compose)?.[1] ?? '';
  assert.match(check, /isWritablePrimary/);
  assert.not.match(check, /rs\.status\(\)\.ok/);
});

test('EventStoreDB takes the largest appends the service makes, in compose and in the test containers', () => {
  const size = Number(envs.get('eventstoredb')?.get('EVENTSTORE_MAX_APPEND_SIZE'));
  assert.ok(size >= 12 * 1024 * 1024 && size <= 16 * 1024 * 1024, `EVENTSTORE_MAX_APPEND_SIZE is ${size}`);
  assert.is(String(size), ESDB_MAX_APPEND_SIZE);
  assert.match(read('test/integration/event-store.esdb.int.test.ts'), /EVENTSTORE_MAX_APPEND_SIZE/);
});

test('the image runs as a non-root user, with its runtime dependencies only', () => {
  const dockerfile = read('Dockerfile');
  assert.match(dockerfile, /^USER (?!root\b)\w+/m);
  assert.match(dockerfile, /npm ci --omit=dev/);
  const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
  // CMD runs the TypeScript through tsx: it must survive --omit=dev.
  assert.match(dockerfile, /CMD \["node", "--import", "tsx"/);
  assert.ok(pkg.dependencies.tsx, 'tsx is a runtime dependency');
});

test.run();
