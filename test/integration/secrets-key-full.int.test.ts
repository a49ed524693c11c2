// The first start that writes DATA_DIR/secrets.key on a full disk (a small tmpfs filled up, as root;
// skipped visibly otherwise) says DATA_DIR is on a full file system and what to do, not a raw ENOSPC,
// and leaves no empty key file behind: once space is back, the next start makes the key.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadSecretBox, SECRETS_KEY_FILE } from '../../src/secrets';
import { fillFileSystem, isRoot, withSmallTmpfs } from '../helpers/full-disk';

const asRoot = isRoot ? test : test.skip;
if (!isRoot) console.log('SKIP secrets-key-full: mounting a small tmpfs needs root');

asRoot('writing DATA_DIR/secrets.key on a full disk names DATA_DIR and what to free', () =>
  withSmallTmpfs('couvert-secrets-full-', '1m', (mount) => {
    const dataDir = join(mount, 'data');
    mkdirSync(dataDir);
    const fillers = fillFileSystem(join(mount, 'filler'));
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
    for (const f of fillers) rmSync(f, { force: true });
    assert.is(loadSecretBox({ secretsKey: null, dataDir }).derive('x').length, 32, 'made once space is back');
  }),
);

test.run();
