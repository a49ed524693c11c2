// What an endpoint answers to a body describing two customers keeps nothing of the other customer's
// (src/webhooks/stand-ins.ts, excerpt.ts): their values are redacted, but not one- or two-character
// values (they would wipe unrelated text), and never inside an earlier `[redacted]` marker.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { responseExcerpt } from '../../src/webhooks/excerpt';
import { othersData } from '../../src/webhooks/stand-ins';

const t = suite('webhooks: redacting the other customers from an answer');

const body = (a: { name: string; lang: string; size: string; note: string }) =>
  JSON.stringify({ data: { previous_attributes: { customer: a }, object: { party: '1' } } });

t('short values of the other customer are not redacted; longer ones are, markers intact', () => {
  const full = body({ name: 'Amelia Qqa', lang: 'fr', size: '1', note: 'act' });
  const standIn = body({ name: '[erased]', lang: 'en', size: '2', note: 'red' });
  const values = othersData(full, standIn);
  assert.ok(values.includes('Amelia Qqa'));
  assert.not.ok(values.includes('fr'), 'two characters: kept');
  assert.not.ok(values.includes('1'), 'one character: kept');
  const answer = 'error 1 for Amelia Qqa: lang fr refused';
  const got = responseExcerpt(answer, ['whsec_x', ...values])?.text;
  assert.is(got, 'error 1 for [redacted]: lang fr refused');
  // A three-character value that is part of the marker leaves the earlier marker whole.
  assert.is(
    responseExcerpt('key whsec_x, note act', ['whsec_x', 'act'])?.text,
    'key [redacted], note [redacted]',
  );
});

t.run();
