// The projection-versions contract on the embedded pairs (memory log and SQLite log, embedded read
// models). The scaled-out pair runs in scaled.int.test.ts's containers when a runtime exists.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { projectionVersionsContract } from '../contracts/projection-versions.contract';

const memory = suite('projection versions: memory + embedded');
projectionVersionsContract(memory, async () => {
  const events = new MemoryEventStore();
  return { events, docs: new EmbeddedDocumentStore(), close: () => events.close() };
});
memory.run();

const sqlite = suite('projection versions: sqlite + embedded');
projectionVersionsContract(sqlite, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-versions-'));
  const events = SqliteEventStore.open(join(dir, 'events.sqlite'));
  return {
    events,
    docs: new EmbeddedDocumentStore(),
    close: async () => {
      await events.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
sqlite.run();
