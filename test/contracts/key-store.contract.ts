// The behaviour every KeyStore adapter must show (memory, SQLite, MongoDB).
import { randomUUID } from 'node:crypto';
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  KeyDestroyedError,
  type KeyStore,
  KeyStoreError,
  MAX_PAGE_KEYS,
  newPageId,
  pageKeySubject,
} from '../../src/ports/key-store';

export function keyStoreContract(
  test: Test,
  harness: { open(): Promise<KeyStore> | KeyStore; reopen?(): Promise<KeyStore> | KeyStore },
  options: { skip?: string } = {},
): void {
  const it = (name: string, body: (keys: KeyStore, subject: string) => Promise<void>) => {
    if (options.skip) return test.skip(name, () => undefined);
    test(name, async () => {
      const keys = await harness.open();
      try {
        await body(keys, `customer:cus_${randomUUID()}`);
      } finally {
        await keys.close();
      }
    });
  };

  it('obtain creates a 32-byte key once and answers the same key after', async (keys, s) => {
    assert.equal(await keys.find(s), { state: 'none' });
    const k = await keys.obtain(s);
    assert.is(k.length, 32);
    assert.ok((await keys.obtain(s)).equals(k));
    const found = await keys.find(s);
    assert.is(found.state, 'active');
    assert.ok(found.state === 'active' && found.key.equals(k));
    assert.not.ok((await keys.obtain(`${s}-other`)).equals(k), 'one key per subject');
  });

  it('findMany answers every subject as find does, in one call; writes nothing', async (keys, s) => {
    const active = `${s}-a`;
    const gone = `${s}-d`;
    const none = `${s}-n`;
    const k = await keys.obtain(active);
    await keys.destroy(gone, '2026-05-01T00:00:00.000Z');
    const got = await keys.findMany([active, gone, none, active]);
    assert.equal([...got.keys()].sort(), [active, gone, none].sort());
    const a = got.get(active);
    assert.ok(a?.state === 'active' && a.key.equals(k));
    assert.equal(got.get(gone), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    assert.equal(got.get(none), { state: 'none' });
    assert.equal(await keys.find(none), { state: 'none' }, 'nothing was created');
    assert.equal([...(await keys.findMany([none])).entries()], [[none, { state: 'none' }]]);
    assert.is((await keys.findMany([])).size, 0);
    let err: unknown = null;
    try {
      await keys.findMany([active, 'x'.repeat(300)]);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyStoreError, 'a bad subject refuses the call');
  });

  it('concurrent first uses of a subject all get the same key', async (keys, s) => {
    const got = await Promise.all(Array.from({ length: 16 }, () => keys.obtain(s)));
    for (const k of got) assert.ok(k.equals(got[0]!));
  });

  it('destroy removes the key for good and leaves a tombstone; it is idempotent', async (keys, s) => {
    await keys.obtain(s);
    assert.is(await keys.destroy(s, '2026-05-01T00:00:00.000Z'), true);
    assert.equal(await keys.find(s), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    assert.is(await keys.destroy(s, '2026-06-01T00:00:00.000Z'), false, 'a second destroy changes nothing');
    assert.equal(await keys.find(s), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    let err: unknown = null;
    try {
      await keys.obtain(s);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyDestroyedError, 'no new key is ever made for an erased subject');
  });

  it('destroying a subject that never had a key still leaves a tombstone', async (keys, s) => {
    assert.is(await keys.destroy(s, '2026-05-01T00:00:00.000Z'), false);
    assert.is((await keys.find(s)).state, 'destroyed');
    let err: unknown = null;
    try {
      await keys.obtain(s);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyDestroyedError);
  });

  it('obtainMany creates the missing keys, answers the existing ones, and null for destroyed ones', async (keys, s) => {
    const old = await keys.obtain(`${s}-old`);
    await keys.obtain(`${s}-gone`);
    await keys.destroy(`${s}-gone`, '2026-05-01T00:00:00.000Z');
    await keys.destroy(`${s}-never`, '2026-05-01T00:00:00.000Z');
    const fresh = Array.from({ length: 50 }, (_, i) => `${s}-new-${i}`);
    const asked = [`${s}-old`, ...fresh, `${s}-gone`, `${s}-never`, fresh[0]!];
    const got = await keys.obtainMany(asked);
    assert.equal([...got.keys()].sort(), [...new Set(asked)].sort(), 'every distinct subject answered once');
    assert.ok(got.get(`${s}-old`)?.equals(old), 'an existing key is kept');
    assert.is(got.get(`${s}-gone`), null, 'a destroyed key stays destroyed');
    assert.is(got.get(`${s}-never`), null, 'a tombstone without a key gets no key');
    assert.is((await keys.find(`${s}-never`)).state, 'destroyed');
    const seen = new Set<string>();
    for (const f of fresh) {
      const k = got.get(f);
      assert.ok(k && k.length === 32, 'a 32-byte key for each new subject');
      seen.add(k.toString('hex'));
      assert.ok((await keys.obtain(f)).equals(k), 'obtain answers the key obtainMany made');
      const found = await keys.find(f);
      assert.ok(found.state === 'active' && found.key.equals(k));
    }
    assert.is(seen.size, fresh.length, 'one key per subject');
    assert.equal(await keys.obtainMany([]), new Map());
  });

  it('concurrent obtainMany and obtain of the same new subjects all get the same keys', async (keys, s) => {
    const subjects = Array.from({ length: 20 }, (_, i) => `${s}-${i}`);
    const [a, b, c] = await Promise.all([
      keys.obtainMany(subjects),
      keys.obtainMany([...subjects].reverse()),
      keys.obtain(subjects[7]!),
    ]);
    for (const subject of subjects) assert.ok(a.get(subject)?.equals(b.get(subject) as Buffer));
    assert.ok(a.get(subjects[7]!)?.equals(c));
  });

  it('obtainMany with a bad subject refuses the whole call and writes nothing', async (keys, s) => {
    let err: unknown = null;
    try {
      await keys.obtainMany([`${s}-a`, '']);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyStoreError);
    assert.equal(await keys.find(`${s}-a`), { state: 'none' });
  });

  it('bad subjects are refused', async (keys) => {
    for (const bad of ['', 'x'.repeat(201), 42 as unknown as string]) {
      let err: unknown = null;
      try {
        await keys.obtain(bad);
      } catch (e) {
        err = e;
      }
      assert.instance(err, KeyStoreError);
    }
  });

  it('createPage makes a page of distinct keys, each read at its page subject as any key', async (keys, s) => {
    const { page, keys: made } = await keys.createPage(40);
    assert.is(made.length, 40);
    assert.ok(made.every((k) => Buffer.isBuffer(k) && k.length === 32));
    assert.is(new Set(made.map((k) => k.toString('hex'))).size, 40, 'one key per slot');
    const subjects = made.map((_, i) => pageKeySubject(page, i));
    for (const [i, subject] of subjects.entries()) {
      const found = await keys.find(subject);
      assert.ok(found.state === 'active' && found.key.equals(made[i]!), `slot ${i} as made`);
    }
    assert.ok((await keys.obtain(subjects[5]!)).equals(made[5]!), 'obtain answers the slot’s key');
    const many = await keys.findMany([subjects[0]!, subjects[39]!, `${s}-none`]);
    assert.ok(many.get(subjects[39]!)?.state === 'active');
    assert.equal(many.get(`${s}-none`), { state: 'none' });
    const got = await keys.obtainMany([subjects[1]!, `${s}-new`]);
    assert.ok(got.get(subjects[1]!)?.equals(made[1]!));
    assert.is(got.get(`${s}-new`)?.length, 32, 'both layouts in one call');
    const other = await keys.createPage(1);
    assert.is.not(other.page, page, 'every page its own id');
    assert.ok(!other.keys[0]!.equals(made[0]!));
  });

  it('a page key destroyed is gone for good; the other slots of its page stay', async (keys) => {
    const { page, keys: made } = await keys.createPage(8);
    const gone = pageKeySubject(page, 3);
    assert.is(await keys.destroy(gone, '2026-05-01T00:00:00.000Z'), true);
    assert.equal(await keys.find(gone), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    assert.is(await keys.destroy(gone, '2026-06-01T00:00:00.000Z'), false, 'idempotent');
    assert.equal(await keys.find(gone), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    assert.equal((await keys.findMany([gone, pageKeySubject(page, 2)])).get(gone), {
      state: 'destroyed',
      destroyedAt: '2026-05-01T00:00:00.000Z',
    });
    let err: unknown = null;
    try {
      await keys.obtain(gone);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyDestroyedError, 'never made again');
    assert.is((await keys.obtainMany([gone])).get(gone), null);
    for (const i of [0, 2, 4, 7]) {
      const found = await keys.find(pageKeySubject(page, i));
      assert.ok(found.state === 'active' && found.key.equals(made[i]!), `slot ${i} untouched`);
    }
  });

  it('a page subject never made: none, never created by obtain; destroying it leaves a tombstone', async (keys) => {
    const { page } = await keys.createPage(2);
    for (const subject of [pageKeySubject(newPageId(), 0), pageKeySubject(page, 2)]) {
      assert.equal(await keys.find(subject), { state: 'none' });
      for (const call of [() => keys.obtain(subject), () => keys.obtainMany([subject])]) {
        let err: unknown = null;
        try {
          await call();
        } catch (e) {
          err = e;
        }
        assert.instance(err, KeyStoreError, 'only createPage makes a page key');
        assert.not.instance(err, KeyDestroyedError);
      }
      assert.is(await keys.destroy(subject, '2026-05-01T00:00:00.000Z'), false);
      assert.equal(await keys.find(subject), { state: 'destroyed', destroyedAt: '2026-05-01T00:00:00.000Z' });
    }
  });

  it('createPage refuses a size out of 1…MAX_PAGE_KEYS', async (keys) => {
    for (const bad of [0, -1, 2.5, MAX_PAGE_KEYS + 1, Number.NaN, '4' as unknown as number]) {
      let err: unknown = null;
      try {
        await keys.createPage(bad);
      } catch (e) {
        err = e;
      }
      assert.instance(err, KeyStoreError, String(bad));
    }
  });

  if (harness.reopen)
    it('page keys and destroyed slots survive closing and reopening', async (keys) => {
      const { page, keys: made } = await keys.createPage(256);
      await keys.destroy(pageKeySubject(page, 255), '2026-05-01T00:00:00.000Z');
      await keys.close();
      const again = await harness.reopen!();
      try {
        const kept = await again.find(pageKeySubject(page, 254));
        assert.ok(kept.state === 'active' && kept.key.equals(made[254]!));
        assert.equal(await again.find(pageKeySubject(page, 255)), {
          state: 'destroyed',
          destroyedAt: '2026-05-01T00:00:00.000Z',
        });
        assert.is((await again.obtainMany([pageKeySubject(page, 255)])).get(pageKeySubject(page, 255)), null);
      } finally {
        await again.close();
      }
    });

  it("links: a label's members recorded once each, answered, and deleted whole by unlink", async (keys, s) => {
    const label = `links:${s}`;
    const other = `links:${s}-other`;
    assert.equal(await keys.linked(label), []);
    assert.is(await keys.unlink(label), 0, 'unlinking nothing deletes nothing');
    await keys.link(label, 'key:a b');
    await keys.link(label, 'key:b c');
    await keys.link(label, 'key:a b');
    await keys.link(other, 'key:a b');
    assert.equal((await keys.linked(label)).sort(), ['key:a b', 'key:b c']);
    assert.is(await keys.unlink(label), 2);
    assert.equal(await keys.linked(label), [], 'nothing of the label is left');
    assert.equal(await keys.linked(other), ['key:a b'], 'other labels are untouched');
    // No tombstone: the label can be used again, and no key was ever made for it.
    await keys.link(label, 'key:c d');
    assert.equal(await keys.linked(label), ['key:c d']);
    assert.equal(await keys.find(label), { state: 'none' });
    for (const bad of ['', 'x'.repeat(201), 42 as unknown as string]) {
      let err: unknown = null;
      try {
        await keys.link(bad, 'm');
      } catch (e) {
        err = e;
      }
      assert.instance(err, KeyStoreError);
      err = null;
      try {
        await keys.link(label, bad);
      } catch (e) {
        err = e;
      }
      assert.instance(err, KeyStoreError);
    }
    assert.equal(await keys.linked(label), ['key:c d'], 'a refused link writes nothing');
  });

  if (harness.reopen)
    it('links survive closing and reopening; unlinked ones stay gone', async (keys, s) => {
      await keys.link(`links:${s}`, 'kept');
      await keys.link(`links:${s}-gone`, 'gone');
      await keys.unlink(`links:${s}-gone`);
      await keys.close();
      const again = await harness.reopen!();
      try {
        assert.equal(await again.linked(`links:${s}`), ['kept']);
        assert.equal(await again.linked(`links:${s}-gone`), []);
      } finally {
        await again.close();
      }
    });

  if (harness.reopen)
    it('keys and tombstones survive closing and reopening', async (keys, s) => {
      const k = await keys.obtain(s);
      await keys.obtain(`${s}-gone`);
      await keys.destroy(`${s}-gone`, '2026-05-01T00:00:00.000Z');
      await keys.close();
      const again = await harness.reopen!();
      try {
        assert.ok((await again.obtain(s)).equals(k));
        assert.is((await again.find(`${s}-gone`)).state, 'destroyed');
      } finally {
        await again.close();
      }
    });
}
