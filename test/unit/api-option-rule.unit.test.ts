// The API option's third-party rule (spec §5) is written once, in commands/oauth/api-option.ts, and the
// consent pages, the token endpoint, the partner API's authentication and the webhook publisher all ask
// it: a second copy could drift (say, treat an application deleted since as published).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { apiOptionAllows } from '../../commands/oauth/api-option';

const root = new URL('../..', import.meta.url).pathname;

test('a published application works everywhere; a third-party one only with the API option on', () => {
  const published = { published_by_operator: true };
  const thirdParty = { published_by_operator: false };
  assert.is(apiOptionAllows({ api_option: true }, published), true);
  assert.is(apiOptionAllows({ api_option: false }, published), true);
  assert.is(apiOptionAllows({ api_option: true }, thirdParty), true);
  assert.is(apiOptionAllows({ api_option: false }, thirdParty), false);
  // An application not known (deleted since) counts as third-party.
  assert.is(apiOptionAllows({ api_option: false }, null), false);
  assert.is(apiOptionAllows({ api_option: false }, undefined), false);
  assert.is(apiOptionAllows({ api_option: true }, null), true);
});

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...sources(full));
    else if (entry.endsWith('.ts')) out.push(full);
  }
  return out;
}

test('no other module decides it again from the two flags', () => {
  // The restaurant's option and the application's published flag read within a few lines of each other
  // are a copy of the rule.
  const copy =
    /published_by_operator[\s\S]{0,300}?\.api_option\b|\.api_option\b[\s\S]{0,300}?published_by_operator/;
  const copies = ['src', 'commands', 'queries', 'projections']
    .flatMap((d) => sources(join(root, d)))
    .filter((f) => !f.endsWith(join('commands', 'oauth', 'api-option.ts')))
    .filter((f) => copy.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  assert.equal(copies, [], `use apiOptionAllows (commands/oauth/api-option.ts) in ${copies.join(', ')}`);
});

test.run();
