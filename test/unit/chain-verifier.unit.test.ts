import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { verifyChain } from '../../src/audit/chain-verifier';
import { ANY, type RecordedEvent } from '../../src/ports/event-store';
import { collect, ev } from '../contracts/event-store.helpers';

const test = suite('audit: chain verifier');

/** A log of `ops` appends (stream index, event count) on the memory store, read back in order. */
async function logOf(ops: [number, number, number][]): Promise<RecordedEvent[]> {
  const store = new MemoryEventStore();
  for (const [s, n, v] of ops)
    await store.append(
      `s-${s}`,
      Array.from({ length: n }, (_, k) => ev('E', { v, k }, { actor: `credential:key_${v % 3}` })),
      ANY,
    );
  const all = await collect(store.readAll());
  await store.close();
  return all;
}

const ops = fc.array(fc.tuple(fc.nat(4), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 0, max: 1000 })), {
  minLength: 2,
  maxLength: 25,
});

test('an untouched log verifies, with every event chained', async () => {
  await fc.assert(
    fc.asyncProperty(ops, async (o) => {
      const log = await logOf(o);
      const r = verifyChain(log, true);
      assert.equal(r.findings, []);
      assert.is(r.chained, log.length);
      assert.is(r.events, log.length);
    }),
    { numRuns: 60 },
  );
});

test('any edit of data, metadata, type or id is reported at that stream and revision', async () => {
  await fc.assert(
    fc.asyncProperty(
      ops,
      fc.nat(),
      fc.constantFrom('data', 'metadata', 'type', 'id'),
      async (o, pick, field) => {
        const log = await logOf(o);
        const i = pick % log.length;
        const e = log[i]!;
        const edited = { ...e };
        if (field === 'data') edited.data = { ...e.data, v: -1 };
        if (field === 'metadata') edited.metadata = { actor: 'credential:someone_else' };
        if (field === 'type') edited.type = 'Forged';
        if (field === 'id') edited.id = '00000000-0000-4000-8000-000000000000';
        log[i] = edited;
        const r = verifyChain(log, true);
        assert.equal(
          r.findings.map((f) => [f.kind, f.stream, f.revision]),
          [['hash_mismatch', e.stream, e.revision]],
        );
        // The other cause it names is the revision before, which a stream's first event has not.
        const message = r.findings[0]!.message;
        assert.not.match(message, /revision -/);
        if (e.revision > 0)
          assert.match(message, `revision ${e.revision - 1} was edited and its hash recomputed`);
        else assert.not.match(message, /hash recomputed/);
      },
    ),
    { numRuns: 80 },
  );
});

test('an edit whose hash was recomputed is reported at the next event of the stream', async () => {
  const log = await logOf([
    [0, 3, 1],
    [1, 1, 2],
  ]);
  const { hashOfRecorded, GENESIS } = await import('../../src/adapters/event-store/chain');
  const first = log[0]!;
  const forged = { ...first, data: { forged: true } };
  forged.hash = hashOfRecorded(GENESIS, forged);
  log[0] = forged;
  const r = verifyChain(log, true);
  assert.equal(
    r.findings.map((f) => [f.kind, f.stream, f.revision]),
    [['hash_mismatch', 's-0', 1]],
  );
});

test('a removed event is reported (the revision gap, and the position gap)', async () => {
  await fc.assert(
    fc.asyncProperty(ops, fc.nat(), async (o, pick) => {
      const log = await logOf(o);
      const i = pick % log.length;
      const removed = log[i]!;
      log.splice(i, 1);
      const r = verifyChain(log, true);
      const isLastOfStream = !log.some((e) => e.stream === removed.stream && e.revision > removed.revision);
      const isLastOfLog = i === log.length;
      if (!isLastOfStream)
        assert.ok(
          r.findings.some((f) => f.kind === 'missing_revisions' && f.stream === removed.stream),
          'the stream gap is reported',
        );
      if (!isLastOfLog)
        assert.ok(
          r.findings.some((f) => f.kind === 'missing_positions'),
          'the log gap is reported',
        );
      if (isLastOfLog && isLastOfStream)
        assert.equal(r.findings, [], 'truncating the tail is not detectable');
      // "chained and intact" counts only events whose hash was checked: the one after the gap in its
      // stream links to a hash that is gone, so its own cannot be (it is reported, not vouched for).
      assert.is(r.chained, log.length - (isLastOfStream ? 0 : 1), 'chained and intact');
    }),
    { numRuns: 80 },
  );
});

test('two events of a stream swapped are reported', async () => {
  const log = await logOf([[0, 4, 7]]);
  const [a, b] = [log[1]!, log[2]!];
  log[1] = { ...b, revision: a.revision, position: a.position };
  log[2] = { ...a, revision: b.revision, position: b.position };
  const r = verifyChain(log, true);
  assert.ok(r.findings.length >= 1);
  assert.ok(r.findings.every((f) => f.kind === 'hash_mismatch' && f.stream === 's-0'));
});

test('an event moved after a later one of its stream is reported there, and the revisions after them still verify', async () => {
  // Rows moved in the log (their positions swapped), content, revision and hash untouched.
  const log = await logOf([[0, 5, 3]]);
  const [a, b] = [log[1]!, log[2]!];
  log[1] = { ...b, position: a.position };
  log[2] = { ...a, position: b.position };
  const r = verifyChain(log, true);
  assert.equal(
    r.findings.map((f) => [f.kind, f.revision, f.position]),
    [
      ['missing_revisions', 2, a.position.toString()],
      ['missing_revisions', 1, b.position.toString()],
    ],
    r.findings.map((f) => f.message).join('\n'),
  );
  assert.match(r.findings[1]!.message, /revision 1 comes after revision 2 \(events reordered\)/);
});

test('events written before the chain verify, and a hash stripped after chained events is reported', async () => {
  const log = await logOf([[0, 4, 1]]);
  const legacy = log.map(({ hash, ...rest }, i) => (i < 2 ? rest : { ...rest, hash }));
  // The first chained event's hash covers the recomputed hashes of the legacy ones before it.
  const r = verifyChain(legacy, true);
  assert.equal(r.findings, []);
  assert.equal([r.unchained, r.chained], [2, 2]);
  const stripped = log.map(({ hash, ...rest }, i) => (i === 2 ? rest : { ...rest, hash }));
  assert.equal(
    verifyChain(stripped, true).findings.map((f) => f.kind),
    ['unchained_event'],
  );
  const legacyEdited = legacy.map((e, i) => (i === 0 ? { ...e, data: { edited: true } } : e));
  assert.equal(
    verifyChain(legacyEdited, true).findings.map((f) => [f.kind, f.revision]),
    [['hash_mismatch', 2]],
    'an edit of a legacy event is caught by the first chained event after it',
  );
});

test.run();
