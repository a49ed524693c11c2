// The rule table partners read appears, word for word, in the README (the OpenAPI description embeds
// it from the same source), so the two cannot drift apart.
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inputRulesMarkdown } from '../../src/http/input-rules';
import { generateOpenApi } from '../../src/http/openapi';
import { partnerRoutes } from '../../src/http/routes';

test('the README carries the rule table as generated', () => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  assert.ok(readme.includes(inputRulesMarkdown()), 'README.md: paste inputRulesMarkdown() again');
});

test('the OpenAPI description carries it too', () => {
  const doc = generateOpenApi(partnerRoutes(), 'http://127.0.0.1:3000') as { info: { description: string } };
  assert.ok(doc.info.description.includes(inputRulesMarkdown()));
});

test.run();
