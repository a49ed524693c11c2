// The served document passes Redocly's recommended rules (redocly.yaml, where every rule turned off
// says why): no error, no warning. A second opinion beside the parser of openapi.e2e.test.ts, and the
// one that knows OpenAPI 3.0.3's own rules (a `nullable` needs a `type`; examples must fit).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestService, type TestService } from '../helpers/service';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

const lint = suite<{ svc: TestService; dir: string }>('openapi: redocly lint');

lint.before(async (ctx) => {
  ctx.svc = await startTestService();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-lint-'));
});
lint.after(async (ctx) => {
  await ctx.svc.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

async function redocly(file: string): Promise<{ totals: Record<string, number>; problems: Problem[] }> {
  // redocly exits 1 when it finds an error: its report on stdout is what matters either way.
  const out = await run(
    join(root, 'node_modules', '.bin', 'redocly'),
    ['lint', '--config', join(root, 'redocly.yaml'), '--format', 'json', file],
    {
      cwd: root,
      // No telemetry and no update check: tests make no outbound connection.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  return JSON.parse(out.stdout);
}

lint('the served document has no error and no warning', async ({ svc, dir }) => {
  const res = await svc.api('GET', '/openapi.json');
  assert.is(res.status, 200);
  const file = join(dir, 'openapi.json');
  writeFileSync(file, res.text);
  const report = await redocly(file);
  const found = report.problems.map(
    (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`,
  );
  assert.equal(found, [], found.join('\n'));
  assert.is(report.totals.errors, 0);
  assert.is(report.totals.warnings, 0);
});

lint(
  'the lint is not vacuous: a nullable without type, a tag without description and an operation without a 4xx are reported',
  async ({ svc, dir }) => {
    const doc = (await svc.api('GET', '/openapi.json')).body;
    const op = doc.paths['/api/partner/v1/me'].get;
    op.responses['200'].content['application/json'].schema = {
      type: 'object',
      properties: { a: { nullable: true, oneOf: [{ type: 'string' }, { type: 'number' }] } },
    };
    delete doc.tags[0].description;
    // Every operation documents a 4xx, the liveness probe too (an undeclared query parameter: 400).
    delete doc.paths['/healthz'].get.responses['400'];
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(doc));
    const rules = new Set((await redocly(file)).problems.map((p) => p.ruleId));
    assert.ok(rules.has('nullable-type-sibling'), [...rules].join(', '));
    assert.ok(rules.has('tag-description'), [...rules].join(', '));
    assert.ok(rules.has('operation-4xx-response'), [...rules].join(', '));
  },
);

lint.run();
