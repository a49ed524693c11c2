// findMatches (queries/customers.ts), the CSV import's matching of a slice's rows at once, answers for
// every input exactly what findMatch answers for it alone: same customer, same key, drafts and other
// restaurants never, the oldest of several sharing a key. Property-tested against findMatch on random
// read models (with the customers projection's indexes, so the $in queries go through them).
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { emailKey, phoneKey } from '../../commands/customers/contact';
import { CUSTOMERS } from '../../projections/customer-docs';
import { customersProjection } from '../../projections/customers';
import { CUSTOMER_MATCH_ORDER, findMatch, findMatches, type MatchKey } from '../../queries/customers';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';

const restaurant = { _id: 'rest_a', country_code: 'FR' };
const ext = fc.constantFrom('crm-1', 'crm-2', 'crm-3', 'crm-4');
const phone = fc.constantFrom(
  '33612340001',
  '33612340002',
  '33612340003',
  // A number with an extension: its key, and the keys it was stored under before extensions were kept.
  '+33612345606;ext=12',
  '061234560612',
  '+3361234560612',
);
const email = fc.constantFrom(
  'a@example.com',
  'B@Example.com',
  'c@example.com',
  'b@example.com',
  // One address, its internationalised domain spelled three ways.
  'jean@xn--exmple-cua.fr',
  'Jean@Exämple.fr',
  'jean@exa\u0308mple.fr',
);
const doc = fc.record({
  restaurant_id: fc.constantFrom('rest_a', 'rest_a', 'rest_b'),
  external_id: fc.option(ext),
  phone_key: fc.option(phone),
  email: fc.option(email),
  draft: fc.boolean(),
});
const input = fc.record({
  input: fc.record(
    {
      external_id: fc.option(ext),
      phone_number: fc.option(fc.constantFrom('06 12 34 00 01', '06 12 34 56 06 ext. 12')),
      email: fc.option(email),
    },
    { noNullPrototype: true },
  ),
  phoneKey: fc.option(phone),
});
const order = fc.constantFrom<readonly MatchKey[]>(CUSTOMER_MATCH_ORDER, ['phone', 'email'], ['email']);

test('findMatches answers for each input what findMatch answers for it', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(doc, { maxLength: 25 }),
      fc.array(input, { maxLength: 12 }),
      order,
      async (docsIn, inputs, keys) => {
        const docs = new EmbeddedDocumentStore();
        await customersProjection.setup?.(docs);
        // Inserted in a shuffled creation order: the oldest is by created_seq, not by insertion.
        const seqs = docsIn.map((_, i) => ((i * 7) % Math.max(1, docsIn.length)) + i * 0.001);
        for (const [i, d] of docsIn.entries())
          await docs.collection(CUSTOMERS).insertOne({
            _id: `cus_${i}`,
            restaurant_id: d.restaurant_id,
            external_id: d.external_id,
            phone_key: d.phone_key,
            email_key: d.email === null ? null : emailKey(d.email),
            draft: d.draft,
            created_seq: seqs[i] as number,
          });
        const batch = await findMatches(docs, restaurant, inputs, keys);
        assert.is(batch.length, inputs.length);
        for (const [i, { input: one, phoneKey }] of inputs.entries()) {
          const alone = await findMatch(docs, restaurant, one, keys, phoneKey);
          assert.equal(
            batch[i] && { id: batch[i].doc._id, on: batch[i].on },
            alone && { id: alone.doc._id, on: alone.on },
            `input ${i}`,
          );
        }
      },
    ),
    { numRuns: 150 },
  );
});

test('a number with an extension finds a customer stored before extensions were kept', async () => {
  const docs = new EmbeddedDocumentStore();
  await customersProjection.setup?.(docs);
  const put = (id: string, phone_key: string, created_seq: number) =>
    docs.collection(CUSTOMERS).insertOne({
      _id: id,
      restaurant_id: 'rest_a',
      external_id: null,
      phone_key,
      email_key: null,
      draft: false,
      created_seq,
    });
  // "0612345606ext.12", keyed on its digits: the stored form holds no country to read it with.
  await put('cus_old_national', phoneKey('0612345606ext.12'), 1);
  for (const spelling of ['06 12 34 56 06 ext. 12', '+33 6 12 34 56 06 ext. 12', '+33612345606;ext=12']) {
    const input = { phone_number: spelling };
    assert.is((await findMatch(docs, restaurant, input, ['phone']))?.doc._id, 'cus_old_national', spelling);
    assert.is((await findMatches(docs, restaurant, [{ input }], ['phone']))[0]?.doc._id, 'cus_old_national');
  }
  // Another extension, or none, is another line.
  assert.is(await findMatch(docs, restaurant, { phone_number: '06 12 34 56 06 ext. 13' }, ['phone']), null);
  assert.is(await findMatch(docs, restaurant, { phone_number: '06 12 34 56 06' }, ['phone']), null);
  // Several customers holding the number under either key: the first created wins, as for any key.
  await put('cus_new', '+33612345606;ext=12', 2);
  const input = { phone_number: '06 12 34 56 06 ext. 12' };
  assert.is((await findMatch(docs, restaurant, input, ['phone']))?.doc._id, 'cus_old_national');
  assert.is((await findMatches(docs, restaurant, [{ input }], ['phone']))[0]?.doc._id, 'cus_old_national');
});

test('an address with an internationalised domain finds a customer stored with its other spelling', async () => {
  const docs = new EmbeddedDocumentStore();
  await customersProjection.setup?.(docs);
  const put = (id: string, email: string, created_seq: number) =>
    docs.collection(CUSTOMERS).insertOne({
      _id: id,
      restaurant_id: 'rest_a',
      external_id: null,
      phone_key: null,
      email_key: emailKey(email),
      draft: false,
      created_seq,
    });
  // Stored before writes required the ASCII form (xn--) of the domain.
  await put('cus_old_unicode', 'Jean@Exämple.fr', 1);
  for (const spelling of ['jean@xn--exmple-cua.fr', 'JEAN@XN--EXMPLE-CUA.FR', 'jean@exa\u0308mple.fr']) {
    const input = { email: spelling };
    assert.is((await findMatch(docs, restaurant, input, ['email']))?.doc._id, 'cus_old_unicode', spelling);
    assert.is((await findMatches(docs, restaurant, [{ input }], ['email']))[0]?.doc._id, 'cus_old_unicode');
  }
  assert.is(await findMatch(docs, restaurant, { email: 'jean@example.fr' }, ['email']), null);
  // Several customers holding the address under either spelling: the first created wins.
  await put('cus_new', 'jean@xn--exmple-cua.fr', 2);
  const input = { email: 'jean@xn--exmple-cua.fr' };
  assert.is((await findMatch(docs, restaurant, input, ['email']))?.doc._id, 'cus_old_unicode');
  assert.is((await findMatches(docs, restaurant, [{ input }], ['email']))[0]?.doc._id, 'cus_old_unicode');
});

test.run();
