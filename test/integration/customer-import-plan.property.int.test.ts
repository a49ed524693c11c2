// The preview (planImport: its own walk of the file's keys, nothing written) against the import itself
// on random files: rows sharing, changing and swapping external_ids, phones in several spellings and
// emails in any case, with customers already there, for each on_match. What the preview says of a row
// (skipped, created, matched or updated, on which key, and which customer: one already there or the
// one an earlier row creates) must be what the import does (docs/customer-import.md: "what is
// previewed is what Import does").
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { importRowResults } from '../../commands/customer-import/handler';
import { createCustomer } from '../../commands/customers/handler';
import { operatorMeta } from '../../src/core/command-meta';
import {
  type ImportDeps,
  importCustomers,
  importedCustomerId,
  planImport,
  prepareImport,
} from '../../src/customer-import/engine';
import { customerWorld } from '../helpers/customers';

const t = suite('customer import: the preview is what the import does (property)');

/** A small deterministic generator (mulberry32): a failing seed is reported and replayed. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const EXTERNAL = ['E1', 'E2', 'E3'];
const PHONES = [
  ['06 11 11 11 11', '+33611111111', '0033 6 11 11 11 11'],
  ['06 22 22 22 22', '+33 6 22 22 22 22'],
  ['06 33 33 33 33', '+33633333333'],
];
const EMAILS = [
  ['a@example.com', 'A@Example.com'],
  ['b@example.com', 'B@EXAMPLE.COM'],
  ['c@example.com', 'c@EXAMPLE.com'],
];

function randomCase(seed: number) {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const maybe = <T>(p: number, f: () => T): T | '' => (r() < p ? f() : '');
  const existing = Array.from({ length: Math.floor(r() * 3) }, (_, i) => ({
    name: `Old${i}`,
    ...(r() < 0.4 ? { external_id: pick(EXTERNAL) } : {}),
    ...(r() < 0.5 ? { phone_number: pick(PHONES)[1] as string } : {}),
    ...(r() < 0.5 ? { email: pick(EMAILS)[0] as string } : {}),
  }));
  const rows = Array.from({ length: 2 + Math.floor(r() * 10) }, (_, i) =>
    [
      r() < 0.05 ? '' : `R${i + 1}`,
      maybe(0.5, () => pick(pick(EMAILS))),
      maybe(0.5, () => pick(pick(PHONES))),
      maybe(0.3, () => pick(EXTERNAL)),
    ].join(','),
  );
  return { existing, lines: ['name,email,phone_number,external_id', ...rows] };
}

async function outcomes(seed: number, onMatch: 'return_existing' | 'update' | 'create_new') {
  const { existing, lines } = randomCase(seed);
  const w = await customerWorld();
  const deps: ImportDeps = {
    events: w.events,
    clock: w.clock,
    docs: w.docs,
    settle: async () => {
      await w.settle();
    },
  };
  for (const c of existing) await createCustomer(deps, w.restaurant, c, w.meta);
  await w.settle();
  const prepared = await prepareImport(deps, 'rest_a', new TextEncoder().encode(`${lines.join('\n')}\n`));
  const plan = await planImport(deps, prepared, onMatch);
  const jobId = `imp_p${seed}`;
  await importCustomers(deps, prepared, { onMatch, fileName: 'f.csv', meta: operatorMeta('test'), jobId });
  const imported = [];
  for await (const r of importRowResults(deps, jobId)) imported.push(r);
  // A row's customer as the preview names it: one already there, or the one an earlier row creates.
  const planned = plan.rows.map((p) => {
    const customer =
      p.outcome === 'skipped'
        ? null
        : p.outcome === 'created'
          ? importedCustomerId(jobId, p.row)
          : (p.customer_id ?? importedCustomerId(jobId, p.matched_row as number));
    return `${p.row} ${p.outcome} ${p.matched_on ?? '-'} ${customer ?? '-'}`;
  });
  // With update the preview says "updated" where the values turn out the same (the import: matched).
  const done = imported.map((r, i) => {
    const outcome = r.outcome === 'matched' && plan.rows[i]?.outcome === 'updated' ? 'updated' : r.outcome;
    return `${r.row} ${outcome} ${r.matched_on ?? '-'} ${r.customer_id ?? '-'}`;
  });
  return { planned, done, lines, existing };
}

t('random files: each row previewed as imported, for each on_match', async () => {
  for (let seed = 1; seed <= 150; seed++)
    for (const onMatch of ['update', 'return_existing', 'create_new'] as const) {
      const { planned, done, lines, existing } = await outcomes(seed, onMatch);
      assert.equal(
        planned,
        done,
        `seed ${seed}, ${onMatch}: ${JSON.stringify(existing)}\n${lines.join('\n')}`,
      );
    }
});

t.run();
