// readableIssue (src/web/respond.ts): a page's 400 says a list of values in words, without the API's
// JSON quoting, and a list of one as the one value the parameter takes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readableIssue } from '../../src/web/respond';

test('a list of values, a list of one, and anything else as it is', () => {
  assert.is(readableIssue('period must be one of "7","30","90"'), 'period must be one of 7, 30 or 90');
  assert.is(
    readableIssue('on_match must be one of "return_existing","update","create_new"'),
    'on_match must be one of return_existing, update or create_new',
  );
  assert.is(readableIssue('refresh must be one of "off"'), 'refresh must be off');
  assert.is(
    readableIssue('refresh is given more than once; give it once'),
    'refresh is given more than once; give it once',
  );
});

test.run();
