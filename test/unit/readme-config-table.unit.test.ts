// README's environment table: one row per variable, and the body budget's IPv6 prefix as the code
// draws it. Before, BODY_LIMIT_BYTES and TRUST_PROXY had two rows each that disagreed (an IPv6
// client's /64 in one, /56 in the other; a TRUST_PROXY that did or did not cover the body budget).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clientKey } from '../../src/http/body-budget';

const readme = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('## Operator CLI'));
/** Each row's variables (its first cell's `NAME`s) with the row's text. */
const rows = section
  .split('\n')
  .filter((l) => /^\| `[A-Z_]+`/.test(l))
  .map((l) => ({
    names: [...(l.split('|')[1] as string).matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]),
    text: l,
  }));

// Their duplicate rows are another change's (the lead drops this once both are merged).
const ELSEWHERE = ['BODY_TIMEOUT_MS', 'SIGN_IN_FAILURES_PER_ACCOUNT'];

test('each variable has one row', () => {
  const seen = new Map<string, number>();
  for (const r of rows) for (const n of r.names) seen.set(n as string, (seen.get(n as string) ?? 0) + 1);
  const twice = [...seen].filter(([n, c]) => c > 1 && !ELSEWHERE.includes(n)).map(([n]) => n);
  assert.equal(twice, []);
  assert.ok(seen.has('BODY_LIMIT_BYTES') && seen.has('TRUST_PROXY'), 'the table was read');
});

test('BODY_LIMIT_BYTES counts an IPv6 client by the prefix clientKey draws', () => {
  const prefix = /\/(\d+)$/.exec(clientKey('2001:db8:1:2ff::1'))?.[1];
  assert.is(prefix, '56');
  const row = rows.find((r) => r.names.includes('BODY_LIMIT_BYTES'))?.text ?? '';
  assert.match(row, `an IPv6 client's /${prefix}`);
  assert.not.match(row, /\/64/);
});

test.run();
