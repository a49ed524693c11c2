// Concurrent commands on one stream within a process run one after the other (src/core/command.ts):
// none loses its optimistic-concurrency retries to the others and answers 409 (PATCH /customers
// declares no 409), and none loses its change.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createCustomer, loadCustomer, updateCustomer } from '../../commands/customers/handler';
import { type CustomerWorld, customerWorld } from '../helpers/customers';

const t = suite<{ w: CustomerWorld }>('command stream queue');
t.before.each(async (ctx) => {
  ctx.w = await customerWorld();
});

t('eight concurrent updates of one customer all succeed, each change kept', async ({ w }) => {
  const id = (await createCustomer(w, w.restaurant, { name: 'Q' }, w.meta)).customerId;
  // Before, each of five rounds let one append win: three of the eight ran out of retries.
  const bodies = [
    { email: 'q@example.com' },
    { phone_number: '+33612345678' },
    { note: 'note' },
    { tags: ['a'] },
    { lang: 'EN' },
    { newsletter_consent: true },
    { external_id: 'ext-q' },
    { name: 'Q renamed' },
  ];
  const outcomes = await Promise.allSettled(
    bodies.map((b) => updateCustomer(w, w.restaurant, id, b, w.meta)),
  );
  assert.equal(
    outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : String(o.reason))),
    bodies.map(() => 'ok'),
  );
  const p = (await loadCustomer(w, id)).profile;
  assert.equal(
    [p?.email, p?.phone_number, p?.note, p?.tags, p?.lang, p?.newsletter_consent, p?.external_id, p?.name],
    ['q@example.com', '+33612345678', 'note', ['a'], 'EN', true, 'ext-q', 'Q renamed'],
  );
});

t.run();
