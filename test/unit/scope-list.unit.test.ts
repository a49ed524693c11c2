// `--scopes` of the CLI (src/cli/scope-list.ts): one reading for every command that takes it.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CliUsageError } from '../../src/cli/registry';
import { parseScopeList } from '../../src/cli/scope-list';
import { SCOPES } from '../../src/core/scopes';

test('ALL, alone (spaces and empty items around it ignored), is every scope in canonical order', () => {
  for (const raw of ['ALL', ' ALL ', 'ALL,', ',ALL']) assert.equal(parseScopeList(raw), [...SCOPES], raw);
});

test('ALL among other names is refused, naming the value', () => {
  for (const raw of ['ALL,CATALOG_READ', 'CATALOG_READ, ALL', 'ALL,ALL']) {
    const err = (() => {
      try {
        parseScopeList(raw);
      } catch (e) {
        return e;
      }
      return null;
    })();
    assert.instance(err, CliUsageError, raw);
    assert.match((err as Error).message, /ALL stands alone/);
    assert.ok((err as Error).message.includes(raw));
  }
});

test('property: any list of names (ALL aside) is read as given, in order, spaces and empty items dropped', () => {
  const name = fc
    .oneof(fc.constantFrom(...SCOPES), fc.stringMatching(/^[A-Za-z_]{1,12}$/))
    .filter((n) => n !== 'ALL');
  const pad = fc.constantFrom('', ' ', '  ');
  fc.assert(
    fc.property(fc.array(fc.tuple(pad, name, pad, fc.boolean()), { maxLength: 8 }), (items) => {
      const raw = items.map(([a, n, b, empty]) => `${a}${n}${b}${empty ? ',' : ''}`).join(',');
      assert.equal(
        parseScopeList(raw),
        items.map(([, n]) => n),
      );
    }),
  );
});

test.run();
