// Secrets that must stay usable (webhook signing secrets) are kept encrypted at rest with one key:
// AES-256-GCM, a fresh 96-bit IV per value, the tag checked on open. The key comes from SECRETS_KEY
// (32 bytes, base64 or hex), or, embedded and unset, from DATA_DIR/secrets.key (generated on first
// use, mode 0600). Scaled out SECRETS_KEY is required (config.ts): every process must share the key.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR_MODE } from './core/data-dir-mode';
import { fullDisk } from './damaged-files';

const VERSION = 'v1';

/** Encrypts and decrypts short strings with one 32-byte key. The sealed form is `v1.<iv>.<tag>.<ciphertext>` (base64url). */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a secrets key is 32 bytes');
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ct]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** Throws when the value was not sealed with this key (or was altered). */
  open(sealed: string): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }

  /**
   * A 32-byte key of its own for `purpose` (HKDF-SHA256 of this key): the same in every process sharing
   * the key, unrelated to it and to every other purpose's.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `couvert:${purpose}`, 32));
  }

  /** Already loaded (`Secrets.load`). */
  load(): void {}
}

/** A SECRETS_KEY value: 32 bytes as 64 hex characters or as base64/base64url (43–44 characters). Null when malformed. */
export function parseSecretsKey(raw: string): Buffer | null {
  const v = raw.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(v)) {
    const b = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    return b.length === 32 ? b : null;
  }
  return null;
}

export const SECRETS_KEY_FILE = 'secrets.key';

/**
 * The key for this deployment: SECRETS_KEY when given, else DATA_DIR/secrets.key, created (random, 0600)
 * when missing. Losing that file makes the stored signing secrets unreadable: back it up with the data.
 */
export function loadSecretBox(options: { secretsKey: Buffer | null; dataDir: string }): SecretBox {
  if (options.secretsKey) return new SecretBox(options.secretsKey);
  const file = join(options.dataDir, SECRETS_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(options.dataDir, { recursive: true, mode: DATA_DIR_MODE });
    try {
      // wx: two processes starting at once never overwrite each other's key.
      writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        // The file this call created (wx) but could not fill, on a full disk: left empty, the next start
        // would refuse it as holding no key. Then the operator is told what to free.
        try {
          unlinkSync(file);
        } catch {}
        throw fullDisk(err, options.dataDir) ?? err;
      }
    }
  }
  const key = parseSecretsKey(readFileSync(file, 'utf8'));
  if (!key) throw new Error(`${file} does not hold a 32-byte key (64 hex characters)`);
  return new SecretBox(key);
}

/** What code that seals or opens secrets needs. */
export interface Secrets {
  seal(plain: string): string;
  open(sealed: string): string;
  /** A key derived from the secrets key for one purpose (`SecretBox.derive`). */
  derive(purpose: string): Buffer;
  /** Loads (embedded: creates) the key now, so a later use never has to write (a full disk). */
  load(): void;
}

/**
 * Loads the key on first use, so a process that never touches a secret (the CLI's read-only commands)
 * never creates a key file. The server loads it at start (`load()`): its reads derive keys from it.
 */
export function lazySecrets(load: () => SecretBox): Secrets {
  let box: SecretBox | null = null;
  const get = () => {
    box ??= load();
    return box;
  };
  return {
    seal: (p) => get().seal(p),
    open: (s) => get().open(s),
    derive: (purpose) => get().derive(purpose),
    load: () => {
      get();
    },
  };
}

/**
 * Embedded without SECRETS_KEY, at start: DATA_DIR/secrets.key must be there, and hold a key, once the
 * log holds a webhook endpoint (its signing secret is sealed with that key). Generated anew instead, no
 * delivery could be signed again (each attempt failed to open the secret) and the endpoints created
 * since would be sealed with a key the restored file does not hold. Never creates the file (a process
 * that never touches a secret makes none).
 */
export function checkSecretsKeyFile(dataDir: string, holdsSealedSecrets: () => boolean): void {
  const file = join(dataDir, SECRETS_KEY_FILE);
  if (!existsSync(file)) {
    if (holdsSealedSecrets())
      throw new Error(
        `${file} is missing, but the event log holds webhook endpoints whose signing secrets are sealed with it: restore it from the backup of DATA_DIR (or set SECRETS_KEY to the key it held). A new key would open none of them.`,
      );
    return;
  }
  if (!parseSecretsKey(readFileSync(file, 'utf8')))
    throw new Error(
      `${file} does not hold a 32-byte key (64 hex characters): restore it from the backup of DATA_DIR`,
    );
}
