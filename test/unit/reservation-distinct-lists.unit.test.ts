// What partners see of a reservation's tags and attached_files, whatever an older one stored.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asPartnerSees } from '../../commands/reservations/distinct-lists';

test('tags and attached_files: each item once, in the order first given, nothing else lost', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('tags', 'attached_files'),
      fc.array(fc.constantFrom('a', 'b', 'c', 'A')),
      (f, l) => {
        const seen = asPartnerSees(f, l) as string[];
        assert.is(new Set(seen).size, seen.length);
        assert.equal(new Set(seen), new Set(l));
        assert.equal(
          seen,
          l.filter((x, i) => l.indexOf(x) === i),
        );
      },
    ),
  );
});

test('other fields are left as they are, repeats included', () => {
  const tables = ['tbl_1', 'tbl_1'];
  assert.is(asPartnerSees('table_ids', tables), tables);
  assert.is(asPartnerSees('tags', null), null);
});

test.run();
