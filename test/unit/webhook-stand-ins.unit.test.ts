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

t('an answer re-encoding the body (Python, PHP, Java) keeps nothing of the other customer either', () => {
  const full = body({ name: 'Zoë Ünal/Straße 🍷', lang: 'de', size: '1', note: 'Crème brûlée' });
  const standIn = body({ name: '[erased]', lang: 'en', size: '2', note: 'none' });
  const values = othersData(full, standIn);
  // What each encoder writes of the body it parsed and echoes back, as literals (not built by the code
  // under test): Python's json.dumps (ASCII, lower-case hex), PHP's json_encode (ASCII and `\/`), an
  // encoder writing upper-case hex.
  const echoes = [
    '{"customer": {"name": "Zo\\u00eb \\u00dcnal/Stra\\u00dfe \\ud83c\\udf77", "note": "Cr\\u00e8me br\\u00fbl\\u00e9e"}}',
    '{"customer":{"name":"Zo\\u00eb \\u00dcnal\\/Stra\\u00dfe \\ud83c\\udf77","note":"Cr\\u00e8me br\\u00fbl\\u00e9e"}}',
    '{"customer":{"name":"Zo\\u00EB \\u00DCnal/Stra\\u00DFe \\uD83C\\uDF77","note":"Cr\\u00E8me br\\u00FBl\\u00E9e"}}',
  ];
  for (const echo of echoes) {
    const got = responseExcerpt(echo, ['whsec_x', ...values])?.text ?? '';
    assert.not.match(got, /Zo|Stra|Cr.*me/, `${echo} -> ${got}`);
    assert.is(got.split('[redacted]').length - 1, 2, `both values redacted: ${got}`);
  }
});

t.run();
