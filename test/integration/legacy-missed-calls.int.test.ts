// Missed-call events written before their sealing (src/privacy/missed-call-migration.ts):
// - SQLite: a schema 4 log (the caller's number, the message and the outbox's copy in clear, caller
//   streams named after the number) is sealed in place at start, the caller streams renamed to the keyed
//   hash and the streams re-chained; a deleted customer's rows are written erased;
// - EventStoreDB (cannot be rewritten): those events read as erased once their customer is, on every
//   read path. Run on the memory store here, and on EventStoreDB in a container when a container
//   runtime exists (skipped visibly otherwise; REQUIRE_DOCKER=1 fails).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CALLER_STREAM_PREFIX, callerStream } from '../../commands/missed-calls/events';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { MemoryKeyStore } from '../../src/adapters/key-store/memory';
import { verifyChain } from '../../src/audit/chain-verifier';
import { ANY, type EventStore, type NewEvent, type RecordedEvent } from '../../src/ports/event-store';
import { callerIdsFrom, callerKeySubject, callerPeriod } from '../../src/privacy/caller-ids';
import { upgradeLegacyLog } from '../../src/privacy/legacy';
import { NumberIndex, parseLinkMember } from '../../src/privacy/number-keys';
import { customerSubject } from '../../src/privacy/seal';
import { SealingEventStore } from '../../src/privacy/sealing-event-store';
import { collect, HANG_MS, take } from '../contracts/event-store.helpers';
import { containerRuntimeProblem, gateOnContainers, startScaledStores } from '../helpers/containers';

const R = 'rest_l';
/** The caller's number in every form the old code wrote it, and the greeting by name. */
const PERSONAL = /612345678|Bonjour Ada/;
const GONE = /698765432/;
const meta = { restaurant_id: R, actor: 'credential:key_l' };

/** A call a minute ago: its caller's slot is still in its cooldown at the upgrade. */
const RECENT = new Date(Date.now() - 60_000).toISOString();
/** A call long ago: its slot's cooldown is over. */
const LONG_AGO = '2026-06-02T10:00:00.000Z';

/** What the code before missed-call sealing wrote: a call that sent a message, through the outbox. */
function oldCall(
  call: string,
  customer: string,
  phone: string,
  at = RECENT,
): { stream: string; events: NewEvent[] }[] {
  const base = { missed_call_id: call, restaurant_id: R, at };
  return [
    {
      stream: `missed-call-${call}`,
      events: [
        {
          type: 'MissedCallReported',
          data: { ...base, caller_phone_number: phone, external_call_id: null, occurred_at: base.at },
          metadata: meta,
        },
        {
          type: 'MissedCallMatched',
          data: { ...base, customer_id: customer, customer_created: false, reservation_id: null },
          metadata: meta,
        },
        {
          type: 'MessageRequested',
          data: {
            ...base,
            message_id: `msg_${call}_1`,
            attempt: 1,
            idempotency_key: `${call}.1`,
            to: phone,
            template_id: 'tpl_missed',
            template_name: 'missed_call_fr',
            template_type: 'MISSED_CALL',
            language: 'fr',
            form: 'named',
            parameters: [{ name: 'guest_name', value: 'Ada' }],
            text: 'Bonjour Ada, désolés !',
            sender: 'outbox',
          },
          metadata: meta,
        },
      ],
    },
    {
      stream: `missed-call-caller-${R}-${phone}`,
      events: [{ type: 'MessageSlotTaken', data: { ...base, caller: phone }, metadata: meta }],
    },
    {
      stream: `message-outbox-${call}.1`,
      events: [
        {
          type: 'OutboxMessageRecorded',
          data: {
            outbox_message_id: `outbox_${call}.1`,
            restaurant_id: R,
            idempotency_key: `${call}.1`,
            to: phone,
            template: {
              name: 'missed_call_fr',
              language: 'fr',
              form: 'named',
              parameters: [{ name: 'guest_name', value: 'Ada' }],
            },
            text: 'Bonjour Ada, désolés !',
            at: base.at,
          },
          metadata: meta,
        },
      ],
    },
    {
      stream: `missed-call-${call}`,
      events: [
        {
          type: 'MessageSent',
          data: {
            ...base,
            message_id: `msg_${call}_1`,
            attempt: 1,
            provider: 'outbox',
            provider_message_id: `outbox_${call}.1`,
            left_machine: false,
          },
          metadata: meta,
        },
      ],
    },
  ];
}

async function write(store: EventStore, parts: { stream: string; events: NewEvent[] }[]) {
  for (const { stream, events } of parts) await store.append(stream, events, ANY);
}

function stored(file: string): { text: string; streams: string[] } {
  const db = new Database(file, { readonly: true });
  try {
    return {
      text: (db.prepare('SELECT data FROM events ORDER BY position').pluck().all() as string[]).join('\n'),
      streams: db.prepare('SELECT DISTINCT stream FROM events').pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

const dirs: string[] = [];
const sqlite = suite('legacy missed calls: the embedded log is sealed in place');
sqlite.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A log file as an older version left it: `write` appends through a store of this code, then the
 * schema version is set back to `version` (the migrations after it have not run).
 */
async function oldLog(version: number, write: (old: SqliteEventStore) => Promise<void>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), `couvert-legacy-mc${version}-`));
  dirs.push(dir);
  const file = join(dir, 'events.sqlite');
  const old = SqliteEventStore.open(file);
  await write(old);
  await old.close();
  const db = new Database(file);
  db.pragma(`user_version = ${version}`);
  db.close();
  return file;
}

sqlite(
  'a call another process appends while the keys are fetched is sealed too (planned again)',
  async () => {
    const file = await oldLog(4, (old) => write(old, oldCall('mc_1', 'cus_1', '+33612345678')));
    // Another process still running the old code writes a call in clear between the plan and the
    // migration's transaction: here, while the migration fetches its keys.
    let raced = 0;
    class RacingKeys extends MemoryKeyStore {
      override async obtainMany(subjects: readonly string[]) {
        if (raced++ === 0) {
          const other = SqliteEventStore.open(file);
          await write(other, oldCall('mc_9', 'cus_9', '+33655554444'));
          await other.close();
        }
        return super.obtainMany(subjects);
      }
    }
    const keys = new RacingKeys();
    const store = SqliteEventStore.open(file);
    try {
      const done = await upgradeLegacyLog(store, keys);
      assert.is(store.schemaVersion, 6);
      assert.ok(raced >= 2, 'planned again after the log grew');
      assert.equal([done.missed_call_rows_sealed, done.missed_call_rows_unowned], [8, 0]);
      assert.not.match(stored(file).text, /655554444|612345678/, 'both calls sealed, none left in clear');
      const layer = new SealingEventStore(store, keys);
      const call = await layer.readStream('missed-call-mc_9');
      assert.equal(
        [call[0]!.data.caller_phone_number, call[0]!.data.customer_id],
        ['+33655554444', 'cus_9'],
        'sealed with its own customer key, not written erased',
      );
    } finally {
      await store.close();
    }
  },
);

sqlite(
  'a schema 4 log: calls, messages and the outbox sealed, caller streams renamed, re-chained',
  async () => {
    const file = await oldLog(4, async (old) => {
      await write(old, oldCall('mc_1', 'cus_1', '+33612345678'));
      // A customer deleted before this change (their key destroyed then): their call is written erased.
      await write(old, oldCall('mc_2', 'cus_gone', '+33698765432', LONG_AGO));
      // A call to a restaurant without the feature named no customer: step 3 leaves it, step 4 seals it
      // with a key of its own, linked from its number.
      await old.append(
        'missed-call-mc_3',
        [
          {
            type: 'MissedCallReported',
            data: {
              missed_call_id: 'mc_3',
              restaurant_id: R,
              at: 't',
              caller_phone_number: '+33611110000',
              external_call_id: null,
              occurred_at: 't',
            },
            metadata: meta,
          },
        ],
        ANY,
      );
    });
    assert.match(stored(file).text, PERSONAL);

    const keys = new MemoryKeyStore();
    await keys.obtain(customerSubject('cus_gone'));
    await keys.destroy(customerSubject('cus_gone'), 't');
    const store = SqliteEventStore.open(file);
    try {
      assert.ok(store.needsLegacyUpgrade);
      const done = await upgradeLegacyLog(store, keys);
      assert.is(store.schemaVersion, 6);
      assert.not.ok(store.needsLegacyUpgrade);
      assert.equal(
        [done.missed_call_rows_sealed, done.missed_call_rows_unowned, done.caller_streams_renamed],
        [8, 1, 2],
        'Reported, Requested, SlotTaken, Outbox × 2 calls; the unowned one; two caller streams',
      );
      const after = stored(file);
      assert.not.match(after.text, PERSONAL, 'nothing personal left in clear in the log');
      assert.not.match(after.text, GONE);
      assert.not.match(after.text, /611110000/, 'the call no customer owned is sealed too');
      assert.is(done.missed_call_rows_number_sealed, 1);
      assert.not.ok(
        after.streams.some((s) => /\+\d/.test(s)),
        `no stream id holds a number: ${after.streams}`,
      );
      const all = await collect(store.readAll());
      assert.equal(verifyChain(all, true).findings, [], 'the chain covers the rewritten and renamed rows');

      const layer = new SealingEventStore(store, keys);
      const call = await layer.readStream('missed-call-mc_1');
      assert.equal(
        [call[0]!.data.caller_phone_number, call[2]!.data.to, call[2]!.data.text, call[0]!.data.customer_id],
        ['+33612345678', '+33612345678', 'Bonjour Ada, désolés !', 'cus_1'],
        'read in clear while the key exists',
      );
      // The cooldown goes on where it was: the renamed stream is one the handler now reads (this
      // period's or the previous one's, src/privacy/caller-ids.ts).
      const readNow = await callerIdsFrom(keys).slots(R, '+33612345678', new Date());
      const slotStream = [readNow.take, ...readNow.earlier]
        .map((id) => callerStream(R, id))
        .find((s) => after.streams.includes(s));
      assert.ok(slotStream, `one of the streams read now was renamed to: ${after.streams}`);
      const slot = await layer.readStream(slotStream as string);
      assert.equal(
        slot.map((e) => [e.type, e.data.caller]),
        [['MessageSlotTaken', '+33612345678']],
      );
      // The slot long over got an id under a key never kept: nothing can name that caller again.
      const oldPeriod = callerPeriod(new Date(LONG_AGO));
      assert.is((await keys.find(callerKeySubject(R, oldPeriod))).state, 'none');
      assert.ok(
        after.streams.some((s) => s.startsWith(`${CALLER_STREAM_PREFIX}${R}-p${oldPeriod}-`)),
        `the old caller stream is renamed too: ${after.streams}`,
      );
      // The unowned call reads in clear, under a key named by its number's link; a customer of the
      // restaurant who has that number, once erased, takes it with them.
      const [unowned] = await layer.readStream('missed-call-mc_3');
      assert.equal(
        [unowned!.data.caller_phone_number, (unowned!.data as { customer_id?: unknown }).customer_id],
        ['+33611110000', undefined],
      );
      const label = await new NumberIndex(keys).label(R, '+33611110000');
      const members = await keys.linked(label);
      assert.is(members.length, 1);
      assert.is(parseLinkMember(members[0] as string)?.callId, 'mc_3');
      const gone = await layer.readStream('missed-call-mc_2');
      assert.equal([gone[0]!.data.caller_phone_number, gone[0]!.data.erased], [null, true]);
      await layer.erase('cus_1');
      const erased = [
        ...(await layer.readStream('missed-call-mc_1')),
        ...(await layer.readStream('message-outbox-mc_1.1')),
        ...(await layer.readStream(slotStream as string)),
      ];
      assert.not.match(JSON.stringify(erased.map((e) => e.data)), PERSONAL, 'erased through the layer');
      assert.equal(
        await upgradeLegacyLog(store, keys),
        {
          hashed: 0,
          rewritten: 0,
          erased: 0,
          resealed: 0,
          missed_call_rows_sealed: 0,
          missed_call_rows_unowned: 0,
          caller_streams_renamed: 0,
          rows_rechained: 0,
          missed_call_rows_number_sealed: 0,
        },
        'once',
      );
    } finally {
      await store.close();
    }
  },
);

sqlite(
  'a schema 5 log (migrated before unowned calls were sealed): those calls sealed with keys of their own, erased with a customer who has the number',
  async () => {
    const file = await oldLog(5, async (old) => {
      const reported = (call: string, phone: string) => ({
        type: 'MissedCallReported',
        data: {
          missed_call_id: call,
          restaurant_id: R,
          at: 't',
          caller_phone_number: phone,
          external_call_id: null,
          occurred_at: 't',
        },
        metadata: meta,
      });
      // Two calls of one number and one of another, none matched to a customer; a matched call's
      // MessageSent (nothing personal) in between.
      await old.append('missed-call-mc_a', [reported('mc_a', '+33622220000')], ANY);
      await old.append('missed-call-mc_b', [reported('mc_b', '+33622220000')], ANY);
      await old.append('missed-call-mc_c', [reported('mc_c', '+33633330000')], ANY);
    });
    assert.match(stored(file).text, /622220000/);

    const keys = new MemoryKeyStore();
    const store = SqliteEventStore.open(file);
    try {
      assert.ok(store.needsLegacyUpgrade);
      const done = await upgradeLegacyLog(store, keys);
      assert.is(store.schemaVersion, 6);
      assert.is(done.missed_call_rows_number_sealed, 3);
      assert.not.match(stored(file).text, /622220000|633330000/, 'no number left in clear');
      assert.equal(verifyChain(await collect(store.readAll()), true).findings, [], 're-chained');
      const layer = new SealingEventStore(store, keys);
      const read = async (call: string) => (await layer.readStream(`missed-call-${call}`))[0]!.data;
      assert.equal(
        [(await read('mc_a')).caller_phone_number, (await read('mc_c')).caller_phone_number],
        ['+33622220000', '+33633330000'],
        'read in clear while their keys exist',
      );
      // A customer of the restaurant with the first number is created, then erased: both calls of that
      // number go with them, the other number's call stays.
      await layer.append(
        'customer-cus_n',
        [
          {
            type: 'CustomerCreated',
            data: {
              customer_id: 'cus_n',
              restaurant_id: R,
              profile: { name: 'N', phone_number: '+33622220000' },
            },
            metadata: meta,
          },
        ],
        ANY,
      );
      await layer.erase('cus_n');
      assert.equal(
        [(await read('mc_a')).caller_phone_number, (await read('mc_b')).caller_phone_number],
        [null, null],
        'erased with the customer who had the number',
      );
      assert.is((await read('mc_c')).caller_phone_number, '+33633330000');
      assert.is((await upgradeLegacyLog(store, keys)).missed_call_rows_number_sealed, 0, 'once');
    } finally {
      await store.close();
    }
  },
);

sqlite.run();

/** Events in clear read as erased once their customer is: the store cannot be rewritten. */
async function erasedOnRead(inner: EventStore, suffix: string) {
  const head = await inner.headPosition();
  const call = `mc_${suffix}`;
  const customer = `cus_${suffix}`;
  const parts = oldCall(call, customer, '+33612345678');
  await write(inner, parts);
  const keys = new MemoryKeyStore();
  const layer = new SealingEventStore(inner, keys, undefined, { eraseLegacy: true });
  const sub = layer.subscribe({ after: head });
  try {
    const streams = [...new Set(parts.map((p) => p.stream))];
    const clear = (await Promise.all(streams.map((s) => layer.readStream(s)))).flat();
    assert.match(JSON.stringify(clear.map((e) => e.data)), PERSONAL, 'in clear before erasure');
    await layer.append(
      `customer-${customer}`,
      [{ type: 'CustomerDeleted', data: { customer_id: customer, restaurant_id: R, at: 't', reason: null } }],
      ANY,
    );
    const mine = (e: RecordedEvent) => streams.includes(e.stream);
    const viaStreams = (await Promise.all(streams.map((s) => layer.readStream(s)))).flat();
    const viaAll = (await collect(layer.readAll())).filter(mine);
    const viaSub = (await take(sub[Symbol.asyncIterator](), 7, HANG_MS)).filter(mine);
    for (const [how, events] of [
      ['readStream', viaStreams],
      ['readAll', viaAll],
      ['subscribe', viaSub],
    ] as const) {
      assert.is(events.length, 6, `${how} read them: ${events.map((e) => e.type)}`);
      // (The caller stream's id keeps the number on a log that cannot be rewritten: docs/AUDIT.md.)
      assert.not.match(JSON.stringify(events.map((e) => e.data)), PERSONAL, `${how}: erased`);
    }
    const reported = viaStreams.find((e) => e.type === 'MissedCallReported') as RecordedEvent;
    assert.equal([reported.data.caller_phone_number, reported.data.erased], [null, true]);
    const outbox = viaStreams.find((e) => e.type === 'OutboxMessageRecorded') as RecordedEvent;
    assert.equal([outbox.data.to, outbox.data.text, outbox.data.erased], [null, null, true]);
  } finally {
    await sub.close();
  }
}

const memory = suite('legacy missed calls: events in clear on a store that cannot be rewritten (memory)');
memory('read as erased once the customer is, on every read path', async () => {
  const inner = new MemoryEventStore();
  await erasedOnRead(inner, '7');
  await inner.close();
});
memory.run();

const NAMES = ['EventStoreDB: missed-call events in clear read as erased once the customer is'];
const problem = await containerRuntimeProblem();
const esdb = suite('legacy missed calls: eventstoredb');
if (gateOnContainers(esdb, 'legacy missed-call sealing on EventStoreDB', problem, NAMES)) {
  esdb(NAMES[0]!, async () => {
    const stores = await startScaledStores();
    const { EsdbEventStore } = await import('../../src/adapters/event-store/eventstoredb');
    const inner = await EsdbEventStore.connect(stores.esdbUrl, { connectTimeoutMs: 60_000 });
    try {
      await erasedOnRead(inner, String(Date.now()));
    } finally {
      await inner.close();
      await stores.stop();
    }
  });
}
esdb.run();
