// Refusals said as sentences on the dashboard's pages: the first letter is capitalised only where the
// sentence starts with a plain word, never an identifier ("Customer.created needs CUSTOMERS_READ" named
// an event type that does not exist).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { issueText } from '../../src/http/routes/dashboard-webhooks';
import { sentenceStart } from '../../src/web/sentence';

test('an endpoint form issue that starts with an event type keeps it as written', () => {
  assert.is(
    issueText({
      path: 'enabled_events.0',
      code: 'forbidden',
      message: 'customer.created needs CUSTOMERS_READ, which this credential does not hold',
    }),
    'customer.created needs CUSTOMERS_READ, which this credential does not hold',
  );
  assert.is(issueText({ path: 'form', code: 'x', message: 'too many endpoints' }), 'Too many endpoints');
});

test('sentenceStart: a plain first word is capitalised, an identifier is not', () => {
  assert.is(sentenceStart('the file is empty'), 'The file is empty');
  assert.is(sentenceStart('customer.created needs CUSTOMERS_READ'), 'customer.created needs CUSTOMERS_READ');
  assert.is(sentenceStart('cf:allergies is not a customer field'), 'cf:allergies is not a customer field');
  assert.is(sentenceStart('external_id is too long'), 'external_id is too long');
  assert.is(sentenceStart('email: must be an email address'), 'Email: must be an email address');
  assert.is(sentenceStart('url'), 'Url');
  assert.is(sentenceStart(''), '');
  assert.is(sentenceStart('"nickname" is not a customer field'), '"nickname" is not a customer field');
});

test.run();
