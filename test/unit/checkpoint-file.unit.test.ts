// DATA_DIR/webhooks.checkpoint is read by one function (parseCheckpoint): the publisher's start and the
// start's check for a missing log (checkLogPresent) agree on what the file holds. Before, each had its
// own copy of the rule (a regular expression and a BigInt in both).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkLogPresent } from '../../src/damaged-files';
import { positionToString } from '../../src/ports/event-store';
import { CHECKPOINT_FILE, parseCheckpoint } from '../../src/webhooks/checkpoint-file';

const cases: [string, bigint | undefined][] = [
  [positionToString(42n), 42n],
  [`${positionToString(7n)}\n`, 7n],
  [`  ${positionToString(123456789n)}  `, 123456789n],
  [positionToString(0n), 0n],
  ['', undefined],
  ['0000000042', undefined], // cut short
  ['4200000000000000000000', undefined], // too long
  ['00000000000000000x42', undefined],
  ['-0000000000000000042', undefined],
];

test('parseCheckpoint: a 20-digit position (whitespace around ignored), else undefined', () => {
  for (const [text, expected] of cases) assert.is(parseCheckpoint(text), expected, JSON.stringify(text));
});

test('the missing-log check counts a checkpoint as a trace exactly when parseCheckpoint reads a position past 0', () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-checkpoint-file-'));
  try {
    for (const [text, expected] of cases) {
      writeFileSync(join(dir, CHECKPOINT_FILE), text);
      let refusal: string | null = null;
      try {
        checkLogPresent(dir);
      } catch (err) {
        refusal = (err as Error).message;
      }
      if (expected !== undefined && expected > 0n)
        assert.match(refusal ?? '', `is at position ${expected} of it`, JSON.stringify(text));
      else assert.is(refusal, null, JSON.stringify(text));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
