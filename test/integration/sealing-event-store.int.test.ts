// The sealing layer is an EventStore like any other: the port's whole contract holds through it.
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { ANY, NO_STREAM, WrongExpectedRevisionError } from '../../src/ports/event-store';
import {
  KeyStoreError,
  MAX_PAGE_KEYS,
  newPageId,
  pageKeySubject,
  parsePageKeySubject,
} from '../../src/ports/key-store';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { eventStoreContract } from '../contracts/event-store.contract';
import { collect, HANG_MS, take } from '../contracts/event-store.helpers';

const test = suite('event-store: sealing layer over memory');
eventStoreContract(
  test,
  { open: () => new SealingEventStore(new MemoryEventStore(), new MemoryKeyStore()) },
  { fresh: true, strictIds: true },
);

// As over EventStoreDB: events in clear are checked for an erased customer on every read.
const legacy = suite('event-store: sealing layer over memory, erasing events written in clear');
eventStoreContract(
  legacy,
  {
    open: () =>
      new SealingEventStore(new MemoryEventStore(), new MemoryKeyStore(), undefined, { eraseLegacy: true }),
  },
  { fresh: true, strictIds: true },
);
legacy.run();

test('every read path opens sealed events; the store below holds them sealed; deletion erases', async () => {
  const inner = new MemoryEventStore();
  const keys = new MemoryKeyStore();
  const store = new SealingEventStore(inner, keys);
  const sub = store.subscribe();
  try {
    const created = {
      type: 'CustomerCreated',
      data: {
        customer_id: 'cus_1',
        restaurant_id: 'r',
        at: 't',
        profile: { name: 'Ada', email: 'a@x.test' },
      },
    };
    await store.append('customer-cus_1', [created], NO_STREAM);
    const [live] = await take(sub[Symbol.asyncIterator](), 1, HANG_MS);
    for (const e of [
      live!,
      ...(await store.readStream('customer-cus_1')),
      ...(await collect(store.readAll())),
    ])
      assert.equal(e.data.profile, { name: 'Ada', email: 'a@x.test' });
    assert.not.match(
      JSON.stringify((await inner.readStream('customer-cus_1')).map((e) => e.data)),
      /Ada|a@x/,
    );
    await store.append(
      'customer-cus_1',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_1', restaurant_id: 'r', at: 't', reason: null },
        },
      ],
      0,
    );
    assert.is((await keys.find('customer:cus_1')).state, 'destroyed');
    const [erased] = await store.readStream('customer-cus_1');
    assert.equal(erased!.data.profile, { name: '[erased]', email: null });
    assert.is(erased!.data.erased, true);
  } finally {
    await sub.close();
    await store.close();
  }
});

test("a reservation's customer removed mid-append seals nothing after it with the old customer's key, remembered or read from the stream", async () => {
  const inner = new MemoryEventStore();
  const keys = new MemoryKeyStore();
  // A layer that never saw the stream (reads its customer first), then one that remembers it.
  for (const remembers of [false, true]) {
    const stream = `reservation-res_${remembers}`;
    const base = { reservation_id: `res_${remembers}`, restaurant_id: 'r', at: 't' };
    const writer = new SealingEventStore(inner, keys);
    await writer.append(
      stream,
      [{ type: 'ReservationCreated', data: { ...base, reservation: { customer_id: 'cus_1' } } }],
      NO_STREAM,
    );
    const store = remembers ? writer : new SealingEventStore(inner, keys);
    await store.append(
      stream,
      [
        { type: 'ReservationStatusChanged', data: { ...base, status: 'CONFIRMED', reason: 'before' } },
        {
          type: 'ReservationUpdated',
          data: { ...base, changes: { customer_id: null }, previous: { customer_id: 'cus_1' } },
        },
        { type: 'ReservationStatusChanged', data: { ...base, status: 'CONFIRMED', reason: 'after' } },
      ],
      ANY,
    );
    const [, before, , after] = await inner.readStream(stream);
    assert.ok(before!.data.sealed, `sealed with the reservation's customer before the change (${remembers})`);
    assert.not.ok(before!.data.reason);
    assert.is(after!.data.reason, 'after', 'no customer any more: nothing to seal it with');
    assert.not.ok(after!.data.sealed);
  }
});

const created = (id: string) => ({
  type: 'CustomerCreated',
  data: {
    customer_id: id,
    restaurant_id: 'r',
    at: 't',
    profile: { name: `N ${id}`, email: `${id}@x.test` },
  },
});
const updated = (id: string) => ({
  type: 'CustomerUpdated',
  data: { customer_id: id, restaurant_id: 'r', at: 't', changes: { note: `note ${id}` }, previous: {} },
});
const deleted = (id: string) => ({
  type: 'CustomerDeleted',
  data: { customer_id: id, restaurant_id: 'r', at: 't', reason: 'asked' },
});

function counting(keys: MemoryKeyStore): string[][] {
  const calls: string[][] = [];
  const obtainMany = keys.obtainMany.bind(keys);
  keys.obtainMany = (subjects) => {
    calls.push([...subjects]);
    return obtainMany(subjects);
  };
  keys.obtain = () => Promise.reject(new Error('obtain one by one'));
  return calls;
}

test('a sealed event whose key is cached opens at once (openNow), as open() opens it; the rest waits for open()', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  try {
    await store.append('customer-cus_now', [created('cus_now')], NO_STREAM);
    await store.append('customer-cus_now', [updated('cus_now')], 0);
    const raw = await inner.readStream('customer-cus_now');
    for (const e of raw) {
      const now = store.openNow(e);
      assert.ok(now !== undefined, `${e.type}: its key is cached, nothing to wait for`);
      assert.equal(now, await store.open(e));
      assert.equal(now, await new SealingEventStore(inner, keys).open(e), 'as another process decrypts it');
    }
    // Another process (nothing cached): open() looks the key up; then openNow can.
    const other = new SealingEventStore(inner, keys);
    assert.is(other.openNow(raw[0]!), undefined, 'a key to look up: open() runs');
    await other.open(raw[0]!);
    assert.equal(other.openNow(raw[1]!), await store.open(raw[1]!));
    // A deletion always goes through open() (it drops what was cached and kept).
    await store.append(
      'customer-cus_now',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_now', restaurant_id: 'r', at: 't', reason: null },
        },
      ],
      1,
    );
    const deleted = (await inner.readStream('customer-cus_now'))[2]!;
    assert.is(store.openNow(deleted), undefined);
    // Erased: the cached key is gone; what opens at once after a look-up reads as erased.
    await store.open(deleted);
    assert.is(store.openNow(raw[0]!), undefined, 'no key cached any more');
    const erased = await store.open(raw[0]!);
    assert.is(erased.data.erased, true);
    assert.equal(store.openNow(raw[0]!), erased, 'the destroyed key is cached too: erased at once');
    // Events in clear: nothing to open.
    assert.is(store.openNow({ ...raw[0]!, type: 'Other', data: { x: 1 } }), undefined);
    // readAll (which opens at once what it can) gives what a fresh process's open() gives.
    const fresh = new SealingEventStore(inner, keys);
    assert.equal(
      (await collect(store.readAll())).map((e) => e.data),
      (await Promise.all((await inner.readStream('customer-cus_now')).map((e) => fresh.open(e)))).map(
        (e) => e.data,
      ),
    );
  } finally {
    await store.close();
  }
});

test("key page ids sort by time, so each page lands at the index's right edge; unique", async () => {
  const first = Array.from({ length: 64 }, () => newPageId());
  await new Promise((r) => setTimeout(r, 5));
  const later = Array.from({ length: 64 }, () => newPageId());
  assert.is(new Set([...first, ...later]).size, 128);
  assert.ok(
    later.every((k) => first.every((f) => f < k)),
    'every id made later sorts after',
  );
  for (const id of first) assert.equal(parsePageKeySubject(pageKeySubject(id, 255)), { page: id, slot: 255 });
});

test('new customers are sealed with pool keys made ahead in one key-store write, named in the box', async () => {
  const keys = new MemoryKeyStore();
  const calls = counting(keys);
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  try {
    await keys.destroy('customer:cus_gone', 't');
    const pages: number[] = [];
    const createPage = keys.createPage.bind(keys);
    keys.createPage = (n) => {
      pages.push(n);
      return createPage(n);
    };
    const lookups: string[][] = [];
    const findMany = keys.findMany.bind(keys);
    keys.findMany = (subjects) => {
      lookups.push([...subjects]);
      return findMany(subjects);
    };
    const find = keys.find.bind(keys);
    const found: string[] = [];
    keys.find = (subject) => {
      found.push(subject);
      return find(subject);
    };
    const ids = [...Array.from({ length: 30 }, (_, i) => `cus_${i}`), 'cus_gone'];
    await Promise.all(ids.map((id) => store.append(`customer-${id}`, [created(id)], NO_STREAM)));
    assert.equal(
      lookups,
      [ids.map((id) => `customer:${id}`)],
      "the new customers' own subjects of one turn are looked up in one findMany",
    );
    assert.equal(found, [], 'none one by one');
    assert.is(calls.length, 0, 'no key written per customer');
    assert.equal(pages, [256], 'one key page (one key-store write) for the pool');
    const kids = new Set<string>();
    for (const id of ids.slice(0, 30)) {
      const [raw] = await inner.readStream(`customer-${id}`);
      const sealed = raw!.data.sealed as { v: number; kid: string };
      assert.is(sealed.v, 2);
      kids.add(sealed.kid);
      assert.is((await keys.find(`customer:${id}`)).state, 'none', 'no key of their own');
      const [e] = await store.readStream(`customer-${id}`);
      assert.equal(e!.data.profile, { name: `N ${id}`, email: `${id}@x.test` });
    }
    assert.is(kids.size, 30, 'one pool key per customer');
    const [gone] = await store.readStream('customer-cus_gone');
    assert.is(gone!.data.erased, true, 'an erased subject gets no key: nothing personal is written');
    // Later events of the customer in this process: the same pool key, no key-store write.
    await store.append('customer-cus_3', [updated('cus_3')], 0);
    const [, raw] = await inner.readStream('customer-cus_3');
    const first = (await inner.readStream('customer-cus_3'))[0]!.data.sealed as { kid: string };
    assert.is((raw!.data.sealed as { kid: string }).kid, first.kid);
    assert.match(first.kid, /^[0-9a-z]{9}[\w-]{16}\.\d{1,3}$/, 'a page key: <page>.<slot>');
    assert.is(calls.length, 0);
    assert.equal(pages, [256]);
    let err: unknown = null;
    try {
      await store.append('customer-long', [created('x'.repeat(300))], NO_STREAM);
    } catch (e) {
      err = e;
    }
    assert.instance(err, KeyStoreError, 'a bad subject fails its own append');
  } finally {
    await store.close();
  }
});

/**
 * Commits `stream`'s CustomerCreated in `inner` at once but holds its answer until `release`, as the
 * writer thread's commit is seen by readers before the main thread handles its answer. `stored`
 * resolves to the committed events once they are readable.
 */
function holdCreatedAnswer(inner: MemoryEventStore, stream: string) {
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const append = inner.append.bind(inner);
  inner.append = async (...args: Parameters<typeof inner.append>) => {
    const result = await append(...args);
    if (args[0] === stream && (args[1] as { type: string }[])[0]?.type === 'CustomerCreated') await held;
    return result;
  };
  const stored = async () => {
    let raw: Awaited<ReturnType<typeof inner.readStream>> = [];
    // Until a hang bound (50 turns of the event loop were a deadline a loaded machine could miss).
    for (const end = Date.now() + 120_000; raw.length === 0 && Date.now() < end; ) {
      await new Promise((r) => setImmediate(r));
      raw = await inner.readStream(stream).catch(() => []);
    }
    return raw;
  };
  return { release: () => release(), stored };
}

test("a new customer's event read back before its append is answered opens without asking the key store", async () => {
  // The writer thread's commit is visible to the read models' catch-up before the append's answer
  // is handled: the layer knows the pool key it handed out from the moment it sealed with it.
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  const hold = holdCreatedAnswer(inner, 'customer-cus_early');
  try {
    await store.append('customer-cus_warm', [created('cus_warm')], NO_STREAM); // the pool's first page
    const found: string[] = [];
    const find = keys.find.bind(keys);
    keys.find = (subject) => {
      found.push(subject);
      return find(subject);
    };
    const appended = store.append('customer-cus_early', [created('cus_early')], NO_STREAM);
    const raw = await hold.stored();
    assert.is(raw.length, 1, 'in the log, its append not answered yet');
    const opened = await store.open(raw[0]!);
    assert.equal(opened.data.profile, { name: 'N cus_early', email: 'cus_early@x.test' });
    assert.equal(found, [], 'no key-store look-up');
    hold.release();
    await appended;
  } finally {
    hold.release();
    await store.close();
  }
});

test("an erasure between the commit and the append's answer is not undone by the answer", async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  const hold = holdCreatedAnswer(inner, 'customer-cus_late');
  try {
    await store.append('customer-cus_warm', [created('cus_warm')], NO_STREAM);
    const appended = store.append('customer-cus_late', [created('cus_late')], NO_STREAM);
    const raw = await hold.stored();
    assert.is(raw.length, 1, 'committed, its answer held back');
    // Erased meanwhile (a request read the committed stream and deleted the customer).
    await store.append(
      'customer-cus_late',
      [
        {
          type: 'CustomerDeleted',
          data: { customer_id: 'cus_late', restaurant_id: 'r', at: 't', reason: null },
        },
      ],
      0,
    );
    const kid = (raw[0]!.data.sealed as { kid: string }).kid;
    assert.is((await keys.find(`key:${kid}`)).state, 'destroyed');
    hold.release();
    await appended;
    const [first] = await store.readStream('customer-cus_late');
    assert.is(first!.data.erased, true, 'still erased once the answer is handled');
    assert.equal(first!.data.profile, { name: '[erased]', email: null });
  } finally {
    hold.release();
    await store.close();
  }
});

test('the pool grows its pages when new customers come faster than a page is made, and only then', async () => {
  const run = async (bursts: number, perBurst: number) => {
    const keys = new MemoryKeyStore();
    const inner = new MemoryEventStore();
    const store = new SealingEventStore(inner, keys);
    const pages: number[] = [];
    const createPage = keys.createPage.bind(keys);
    keys.createPage = (n) => {
      pages.push(n);
      return createPage(n);
    };
    let n = 0;
    try {
      for (let b = 0; b < bursts; b++)
        await Promise.all(
          Array.from({ length: perBurst }, () => {
            const id = `cus_${n++}`;
            return store.append(`customer-${id}`, [created(id)], NO_STREAM);
          }),
        );
      const kids = new Set<string>();
      for (let i = 0; i < n; i++)
        kids.add(((await inner.readStream(`customer-cus_${i}`))[0]!.data.sealed as { kid: string }).kid);
      assert.is(kids.size, n, 'one pool key per customer, never one twice');
    } finally {
      await store.close();
    }
    return pages;
  };
  // 40 a turn: the next page is always made before the pool runs dry.
  const steady = await run(30, 40);
  assert.ok(
    steady.every((size) => size === 256),
    `steady demand: pages ${steady.join(' ')}`,
  );
  // 1,500 at once, then again: the pool runs dry after its first page, so later pages are larger.
  const bursty = await run(3, 1500);
  assert.is(bursty[0], 256, 'the first page: the pool starts empty, which says nothing of demand');
  assert.ok(Math.max(...bursty) > 256, `pages ${bursty.join(' ')}`);
  assert.ok(Math.max(...bursty) <= MAX_PAGE_KEYS);
  // Told what is coming (a CSV import), the pool makes a large page at once, before any append.
  const keys = new MemoryKeyStore();
  const store = new SealingEventStore(new MemoryEventStore(), keys);
  const pages: number[] = [];
  const createPage = keys.createPage.bind(keys);
  keys.createPage = (n) => {
    pages.push(n);
    return createPage(n);
  };
  try {
    store.expectNewCustomers(100_000);
    assert.equal(pages, [MAX_PAGE_KEYS], 'asked for before the first new customer');
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        store.append(`customer-cus_e${i}`, [created(`cus_e${i}`)], NO_STREAM),
      ),
    );
    assert.equal(pages, [MAX_PAGE_KEYS], '300 new customers took keys from that page');
  } finally {
    await store.close();
  }
});

test('events of known customers whose keys are not cached are asked for in one obtainMany', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const ids = Array.from({ length: 20 }, (_, i) => `cus_${i}`);
  for (const id of ids) await inner.append(`customer-${id}`, [{ type: 'Noted', data: {} }], NO_STREAM);
  const calls = counting(keys);
  const store = new SealingEventStore(inner, keys);
  try {
    await Promise.all(ids.map((id) => store.append(`customer-${id}`, [updated(id)], ANY)));
    assert.is(calls.length, 1);
    assert.equal(calls[0]!.sort(), ids.map((id) => `customer:${id}`).sort());
    for (const id of ids) assert.is((await keys.find(`customer:${id}`)).state, 'active');
  } finally {
    await store.close();
  }
});

test('erasure destroys the pool key the stream names, from a process that never saw the binding', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const first = new SealingEventStore(inner, keys);
  await first.append('customer-cus_1', [created('cus_1')], NO_STREAM);
  await first.append(
    'reservation-res_1',
    [
      {
        type: 'ReservationCreated',
        data: { reservation_id: 'res_1', reservation: { customer_id: 'cus_1', allergies: 'peanuts' } },
      },
    ],
    NO_STREAM,
  );
  const kid = ((await inner.readStream('customer-cus_1'))[0]!.data.sealed as { kid: string }).kid;
  const [res] = await inner.readStream('reservation-res_1');
  assert.is((res!.data.sealed as { kid: string }).kid, kid, "the reservation: the customer's pool key");
  // A failed append to the existing stream binds nothing.
  try {
    await first.append('customer-cus_1', [created('cus_1')], NO_STREAM);
    assert.unreachable();
  } catch (e) {
    assert.instance(e, WrongExpectedRevisionError);
  }
  // Another process (cold: no binding in memory) seals with the customer's own key, v1.
  const second = new SealingEventStore(inner, keys);
  await second.append('customer-cus_1', [updated('cus_1')], 0);
  const [, upd] = await inner.readStream('customer-cus_1');
  assert.is((upd!.data.sealed as { v: number }).v, 1);
  assert.equal((await second.readStream('reservation-res_1'))[0]!.data.reservation, {
    customer_id: 'cus_1',
    allergies: 'peanuts',
  });
  // Deletion interrupted before the keys were destroyed: verify reports it pending.
  await inner.append('customer-cus_1', [deleted('cus_1')], 1);
  const third = new SealingEventStore(inner, keys);
  assert.ok(await third.erasurePending('cus_1'));
  assert.ok(await third.erase('cus_1'));
  assert.not.ok(await third.erasurePending('cus_1'));
  assert.is((await keys.find(`key:${kid}`)).state, 'destroyed');
  assert.is((await keys.find('customer:cus_1')).state, 'destroyed');
  const fresh = new SealingEventStore(inner, keys);
  const [c, u] = await fresh.readStream('customer-cus_1');
  assert.equal(c!.data.profile, { name: '[erased]', email: null });
  assert.is(u!.data.erased, true);
  const [r] = await fresh.readStream('reservation-res_1');
  assert.equal(r!.data.reservation, { customer_id: 'cus_1', allergies: null });
  assert.is(r!.data.erased, true);
  assert.not.match(JSON.stringify((await collect(fresh.readAll())).map((e) => e.data)), /peanuts|N cus_1|@x/);
  // An event appended for the erased customer through the first process is written erased.
  await first.append('customer-cus_1', [deleted('cus_1')], 2).catch(() => undefined);
  await first.erase('cus_1');
  await first.append('customer-cus_1', [updated('cus_1')], ANY);
  const last = (await inner.readStream('customer-cus_1')).at(-1)!;
  assert.is(last.data.erased, true);
  assert.not.ok('sealed' in last.data);
});

test("a customer's v1 box sealed by another process opens in the process that bound them to a pool key", async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const first = new SealingEventStore(inner, keys);
  await first.append('customer-cus_1', [created('cus_1')], NO_STREAM);
  // Another process, cold, seals the update with the customer's own key (v1).
  await new SealingEventStore(inner, keys).append('customer-cus_1', [updated('cus_1')], 0);
  // The first still caches the pool key as the customer's sealing key: it must not open v1 with it.
  const [, u] = await first.readStream('customer-cus_1');
  assert.equal(u!.data.changes, { note: 'note cus_1' });
});

test('boxes this process sealed open without decrypting, exactly as another process decrypts them; not once erased', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const here = new SealingEventStore(inner, keys);
  const decrypts: string[] = [];
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        name: fc.string({ minLength: 1 }),
        email: fc.option(fc.string(), { nil: null }),
        note: fc.option(fc.string(), { nil: undefined }),
        custom_fields: fc.dictionary(fc.string(), fc.jsonValue()),
        tags: fc.array(fc.string()),
      }),
      async (profile) => {
        const id = `cus_${decrypts.length}`;
        decrypts.push(id);
        await here.append(
          `customer-${id}`,
          [{ type: 'CustomerCreated', data: { customer_id: id, restaurant_id: 'r', at: 't', profile } }],
          NO_STREAM,
        );
        const there = new SealingEventStore(inner, keys);
        const [mine] = await here.readStream(`customer-${id}`);
        const [theirs] = await there.readStream(`customer-${id}`);
        assert.equal(mine!.data, theirs!.data);
        assert.is(
          JSON.stringify(mine!.data),
          JSON.stringify(theirs!.data),
          'the same keys in the same order',
        );
      },
    ),
    { numRuns: 50 },
  );
  await here.append('customer-cus_0', [deleted('cus_0')], 0);
  const [c] = await here.readStream('customer-cus_0');
  assert.is(c!.data.erased, true, 'erased here at once, whatever this process remembers');
  assert.is((c!.data.profile as { name: string }).name, '[erased]');
});

test('an erasure interrupted after the tombstone is reported pending until finished, and shows the customer erased to the export check', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const store = new SealingEventStore(inner, keys);
  try {
    await store.append('customer-cus_i', [created('cus_i')], NO_STREAM);
    const kid = ((await inner.readStream('customer-cus_i'))[0]!.data.sealed as { kid: string }).kid;
    const destroy = keys.destroy.bind(keys);
    keys.destroy = (subject, at) =>
      subject.startsWith('key:') ? Promise.reject(new KeyStoreError('down')) : destroy(subject, at);
    await inner.append('customer-cus_i', [deleted('cus_i')], 0);
    let err: unknown = null;
    await store.erase('cus_i').catch((e) => {
      err = e;
    });
    assert.instance(err, KeyStoreError);
    assert.is((await keys.find('customer:cus_i')).state, 'destroyed', 'the tombstone comes first');
    assert.is((await keys.find(`key:${kid}`)).state, 'active');
    assert.ok(await new SealingEventStore(inner, keys).erasurePending('cus_i'));
    keys.destroy = destroy;
    await new SealingEventStore(inner, keys).erase('cus_i');
    assert.not.ok(await new SealingEventStore(inner, keys).erasurePending('cus_i'));
    // A deleted customer whose subject was never written (no tombstone): pending too.
    assert.ok(await store.erasurePending('cus_never'));
  } finally {
    await store.close();
  }
});

test('an append answered as a retry binds the pool key the log names, not the one handed out for it', async () => {
  const keys = new MemoryKeyStore();
  const inner = new MemoryEventStore();
  const event = { id: '6c1f5c0e-8d2a-4e6b-9c47-1a2b3c4d5e6f', ...created('cus_r') };
  await new SealingEventStore(inner, keys).append('customer-cus_r', [event], NO_STREAM);
  const kid = ((await inner.readStream('customer-cus_r'))[0]!.data.sealed as { kid: string }).kid;
  // Another process appends the same event again (an import job run twice): a retry, no new event.
  const second = new SealingEventStore(inner, keys);
  await second.append('customer-cus_r', [event], NO_STREAM);
  assert.is((await inner.readStream('customer-cus_r')).length, 1);
  await second.append(
    'reservation-res_r',
    [
      {
        type: 'ReservationCreated',
        data: { reservation_id: 'res_r', reservation: { customer_id: 'cus_r', allergies: 'sesame' } },
      },
    ],
    NO_STREAM,
  );
  const [res] = await inner.readStream('reservation-res_r');
  const used = (res!.data.sealed as { kid?: string }).kid;
  assert.ok(used === undefined || used === kid, 'sealed with a key the erasure will find');
  // Erased from a third process, which knows only what the log says.
  await inner.append('customer-cus_r', [deleted('cus_r')], 0);
  await new SealingEventStore(inner, keys).erase('cus_r');
  const [r] = await new SealingEventStore(inner, keys).readStream('reservation-res_r');
  assert.equal(r!.data.reservation, { customer_id: 'cus_r', allergies: null });
});

test('a pool write that fails fails the appends waiting for it; the next append tries again', async () => {
  const keys = new MemoryKeyStore();
  const createPage = keys.createPage.bind(keys);
  let fail = true;
  keys.createPage = (n) => (fail ? Promise.reject(new KeyStoreError('down')) : createPage(n));
  const store = new SealingEventStore(new MemoryEventStore(), keys);
  try {
    let err: unknown = null;
    await store.append('customer-cus_a', [created('cus_a')], NO_STREAM).catch((e) => {
      err = e;
    });
    assert.instance(err, KeyStoreError);
    fail = false;
    await store.append('customer-cus_a', [created('cus_a')], NO_STREAM);
    assert.equal((await store.readStream('customer-cus_a'))[0]!.data.profile, {
      name: 'N cus_a',
      email: 'cus_a@x.test',
    });
  } finally {
    await store.close();
  }
});

test.run();
