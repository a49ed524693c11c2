// The import preview's button says what it will do: the rows imported and those skipped (it said
// "Import 8 rows" when 3 of them were skipped), and past the previewed rows, what is known so far.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { importButtonWords } from '../../src/web/pages/import-pages';

test('the whole file previewed: the rows imported and the rows skipped', () => {
  assert.is(importButtonWords(8, 8, 3), 'Import 5 rows (3 skipped)');
  assert.is(importButtonWords(2, 2, 1), 'Import 1 row (1 skipped)');
  assert.is(importButtonWords(8, 8, 0), 'Import 8 rows');
  assert.is(importButtonWords(1, 1, 0), 'Import 1 row');
});

test('only the first rows previewed: at most the others imported, at least those seen skipped', () => {
  assert.is(importButtonWords(1200, 20, 3), 'Import up to 1,197 rows (3 or more skipped)');
  assert.is(importButtonWords(1200, 20, 0), 'Import 1,200 rows');
});

test.run();
