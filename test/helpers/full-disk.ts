// A full disk for the tests that need one: a small tmpfs (mounting needs root; those tests are
// skipped visibly otherwise) filled until it refuses another byte.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether this process may mount a tmpfs. */
export const isRoot = process.getuid?.() === 0;

/**
 * Fills the file system holding `file` until it refuses another byte: big chunks, then what is left in
 * small ones, then single bytes. The files it wrote, to remove when space should come back.
 */
export function fillFileSystem(file: string): string[] {
  const written: string[] = [];
  for (const [name, size] of [
    [file, 64 * 1024],
    [`${file}.rest`, 512],
    [`${file}.last`, 1],
  ] as const) {
    const fd = openSync(name, 'w');
    written.push(name);
    try {
      for (;;) writeSync(fd, Buffer.alloc(size));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    } finally {
      closeSync(fd);
    }
  }
  return written;
}

/**
 * Runs `fn` with a tmpfs of `size` (e.g. '2m') mounted at `<root>/small`, `root` a new temporary
 * directory beside it; unmounts and removes both afterwards, whatever happened.
 */
export async function withSmallTmpfs<T>(
  prefix: string,
  size: string,
  fn: (mount: string, root: string) => Promise<T> | T,
): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const mount = join(root, 'small');
  mkdirSync(mount);
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mount]);
    mounted = true;
    return await fn(mount, root);
  } finally {
    if (mounted) execFileSync('umount', [mount]);
    rmSync(root, { recursive: true, force: true });
  }
}
