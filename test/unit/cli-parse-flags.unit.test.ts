// The CLI's flag parser refuses a flag given twice, as the API refuses a parameter given twice: before,
// `audit export --restaurant rest_a --restaurant rest_b` exported rest_b, `as-of --at 100 --at 391` read
// at 391 (the last value kept, silently). No CLI flag takes several values by repetition (a list is
// comma-separated: --scopes A,B), so every repeat is refused, in every spelling.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CliUsageError, parseFlags } from '../../src/cli/registry';

const refusal = (args: string[], switches: string[] = []): string => {
  try {
    parseFlags(args, switches);
  } catch (err) {
    assert.instance(err, CliUsageError, args.join(' '));
    return (err as Error).message;
  }
  assert.unreachable(`${args.join(' ')} accepted`);
  return '';
};

test('a flag given twice is refused, naming it', () => {
  assert.match(
    refusal(['--restaurant', 'rest_a', '--restaurant', 'rest_b']),
    /^--restaurant is given more than once; give it once$/,
  );
  assert.match(refusal(['--at', '100', 'res_1', '--at=391']), /^--at is given more than once/);
  assert.match(refusal(['--from=2026-01-01', '--from=2026-01-01']), /^--from is given more than once/);
  // Switches too (a repeat of a bare flag, or one with its value).
  assert.match(refusal(['--json', '--json'], ['json']), /^--json is given more than once/);
  assert.match(refusal(['--json', 'false', '--json'], ['json']), /^--json is given more than once/);
});

test('flags given once each still parse as before', () => {
  assert.equal(parseFlags(['--restaurant', 'rest_a', '--from=x', '--json', 'res_1'], ['json']), {
    values: { restaurant: 'rest_a', from: 'x', json: true },
    positionals: ['res_1'],
  });
});
test.run();
