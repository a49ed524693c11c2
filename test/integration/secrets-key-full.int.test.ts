// The first start that writes DATA_DIR/secrets.key on a full disk (a small tmpfs filled up, as root;
// skipped visibly otherwise) says DATA_DIR is on a full file system and what to do, not a raw ENOSPC,
// and leaves no empty key file behind: once space is back, the next start makes the key.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadSecretBox, SECRETS_KEY_FILE } from '../../src/secrets';

/** Fills the file system holding `file` until it refuses another byte. */
function fill(file: string): void {
  for (const [name, size] of [
    [file, 64 * 1024],
    [`${file}.rest`, 512],
    [`${file}.last`, 1],
  ] as const) {
    const fd = openSync(name, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(size));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  }
}

const asRoot = process.getuid?.() === 0 ? test : test.skip;
if (process.getuid?.() !== 0) console.log('SKIP secrets-key-full: mounting a small tmpfs needs root');

asRoot('writing DATA_DIR/secrets.key on a full disk names DATA_DIR and what to free', () => {
  const root = mkdtempSync(join(tmpdir(), 'couvert-secrets-full-'));
  const mount = join(root, 'small');
  mkdirSync(mount);
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
    mounted = true;
    const dataDir = join(mount, 'data');
    mkdirSync(dataDir);
    fill(join(mount, 'filler'));
    const err = (() => {
      try {
        loadSecretBox({ secretsKey: null, dataDir });
        return null;
      } catch (e) {
        return e as Error;
      }
    })();
    assert.ok(err, 'the write fails on the full disk');
    assert.match(err.message, `DATA_DIR ${dataDir} is on a full file system`);
    assert.match(err.message, 'free some space');
    assert.not.ok(existsSync(join(dataDir, SECRETS_KEY_FILE)), 'no empty key file left behind');
    for (const f of ['filler', 'filler.rest', 'filler.last']) rmSync(join(mount, f), { force: true });
    assert.is(loadSecretBox({ secretsKey: null, dataDir }).derive('x').length, 32, 'made once space is back');
  } finally {
    if (mounted) execFileSync('umount', [mount]);
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
