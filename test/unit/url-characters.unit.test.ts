// The webhook URL's character rule is stated twice: the server refuses with `hasSpaceOrControl`
// (src/core/urls.ts, shared with OAuth applications) and the document publishes `URL_CHARACTERS`
// (commands/webhook-endpoints/decide.ts) as the url's pattern. They must give one verdict, so that a
// URL the document takes is one the server takes, and the other way round.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { URL_CHARACTERS } from '../../commands/webhook-endpoints/decide';
import { hasSpaceOrControl } from '../../src/core/urls';

const t = suite('webhook URL characters: the server and the document agree');

t('every character of the Basic Multilingual Plane, and one outside it, alone and inside a URL', () => {
  const disagree: string[] = [];
  const check = (c: string) => {
    for (const text of [c, `https://example.com/a${c}b`]) {
      // The document's pattern as a partner's validator reads it (Ajv compiles patterns with "u").
      const documented = new RegExp(URL_CHARACTERS.source, 'u').test(text);
      if (documented === hasSpaceOrControl(text))
        disagree.push(`U+${c.codePointAt(0)?.toString(16).padStart(4, '0')} in ${JSON.stringify(text)}`);
    }
  };
  for (let cp = 0; cp <= 0xffff; cp++) if (cp < 0xd800 || cp > 0xdfff) check(String.fromCodePoint(cp));
  check('😀');
  assert.equal(disagree, []);
  // And the rule refuses what it says it refuses.
  for (const c of [' ', '\t', '\n', '\r', '\0', '\x7f'])
    assert.ok(hasSpaceOrControl(`https://a.example/${c}`));
  assert.not.ok(hasSpaceOrControl('https://a.example/%20é'));
});

t.run();
