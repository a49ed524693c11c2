// The audit commands' help says exactly which times they take, and names a dashboard account as the
// docs do. Before: `--from ISO`, `<ISO time>`, while only an RFC 3339 date-time with seconds and an
// offset is accepted (`2026-11-28` refused); `--kind user` where docs/AUDIT.md says manager, and
// `audit history usr_…` printed "an user".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { kindFromFlag, kindInWords, kindsForFlag } from '../../src/cli/audit-kinds';
import { registerAllCliCommands } from '../../src/cli/commands';
import { CliUsageError, cliCommands } from '../../src/cli/registry';
import { registerModules } from '../../src/modules';

registerModules();
registerAllCliCommands();
const usage = (name: string) => cliCommands().find((c) => c.name === name)?.usage ?? '';

test('the time flags say what they accept, not "ISO"', () => {
  for (const name of ['audit export', 'audit as-of']) {
    assert.not.match(usage(name), /ISO/, name);
    assert.match(usage(name), /RFC 3339 date-time with seconds and an offset/, name);
    assert.match(usage(name), /a date alone is refused/, name);
  }
});

test('a dashboard account is a manager: in --kind, the help, and in words', () => {
  assert.match(usage('audit history'), /--kind [a-z|-]*\|manager\]/);
  assert.not.match(usage('audit history'), /\|user\]/);
  assert.ok(kindsForFlag().includes('manager') && !kindsForFlag().includes('user'), kindsForFlag().join());
  assert.is(kindFromFlag('manager'), 'user');
  assert.is(kindFromFlag('user'), 'user', 'the old name still reads');
  assert.is(kindFromFlag(undefined), undefined);
  assert.throws(
    () => kindFromFlag('usr'),
    (e: Error) => e instanceof CliUsageError && /kinds: .*manager/.test(e.message),
  );
  assert.is(kindInWords('user'), 'a manager');
  assert.is(kindInWords('oauth-application'), 'an oauth-application');
  assert.is(kindInWords('webhook-endpoint'), 'a webhook-endpoint');
  assert.is(kindInWords('reservation'), 'a reservation');
});

test.run();
