// The runner contract on the embedded pairs: memory log + embedded read models, and the SQLite log +
// embedded read models (what `npm start` runs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { MemoryEventStore } from '../../src/adapters/event-store/memory';
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';
import { projectionRunnerContract } from '../contracts/projection-runner.contract';

const memory = suite('projection runner: memory + embedded');
projectionRunnerContract(memory, async () => {
  const docs = new EmbeddedDocumentStore();
  const events = new MemoryEventStore();
  return { events, docs, reopenDocs: async () => docs, close: async () => events.close() };
});
memory.run();

const sqlite = suite('projection runner: sqlite + embedded');
projectionRunnerContract(sqlite, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'couvert-runner-'));
  const events = SqliteEventStore.open(join(dir, 'events.sqlite'));
  const docs = new EmbeddedDocumentStore();
  return {
    events,
    docs,
    reopenDocs: async () => docs,
    close: async () => {
      await events.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
sqlite.run();
