// README's environment table says the body budget's IPv6 prefix as the code draws it: two rows of
// BODY_LIMIT_BYTES disagreed (/64 and /56). One row per variable: config.unit.test.ts.
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

test('BODY_LIMIT_BYTES counts an IPv6 client by the prefix clientKey draws', () => {
  const prefix = /\/(\d+)$/.exec(clientKey('2001:db8:1:2ff::1'))?.[1];
  assert.is(prefix, '56');
  const row = rows.find((r) => r.names.includes('BODY_LIMIT_BYTES'))?.text ?? '';
  assert.match(row, `an IPv6 client's /${prefix}`);
  assert.not.match(row, /\/64/);
});

test.run();
