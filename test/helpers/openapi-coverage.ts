// Which documented answers (operation and status) no e2e suite checked against the document in a run.
// Usage: OPENAPI_SEEN_DIR=<dir> node --import tsx test/run.ts e2e, then
// node --import tsx test/helpers/openapi-coverage.ts <dir>. Prints each unseen `METHOD path status`,
// then `seen N of M`. The document is the one the server publishes (built without a server).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config';
import { generateOpenApi } from '../../src/http/openapi';
import { partnerRoutes } from '../../src/http/routes/index';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: openapi-coverage.ts <OPENAPI_SEEN_DIR>');
  process.exit(2);
}
const seen = new Set<string>();
for (const file of readdirSync(dir))
  if (file.startsWith('seen-'))
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) if (line) seen.add(line);

const config = loadConfig({});
const doc = generateOpenApi(partnerRoutes(), config.baseUrl) as {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
};
let total = 0;
const unseen: string[] = [];
for (const [path, ops] of Object.entries(doc.paths))
  for (const [method, op] of Object.entries(ops))
    for (const status of Object.keys(op.responses)) {
      total++;
      const key = `${method.toUpperCase()} ${path} ${status}`;
      if (!seen.has(key)) unseen.push(key);
    }
for (const key of unseen) console.log(key);
console.log(`seen ${total - unseen.length} of ${total}`);
