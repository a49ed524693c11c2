// Preloaded into a spawned server (`node --import tsx --import ./test/helpers/slow-replay.ts
// src/main.ts`): every read of the embedded log hands out its events one per SLOW_REPLAY_MS (default
// 50) once SLOW_REPLAY_AFTER of them (default 100) were read, and says on stderr when that point is
// reached. A log of a few thousand events then takes minutes to replay, so a test can signal the
// process mid-replay without a log that large; the count read is printed at exit.
import { SqliteEventStore } from '../../src/adapters/event-store/sqlite';

const after = Number(process.env.SLOW_REPLAY_AFTER ?? 100);
const ms = Number(process.env.SLOW_REPLAY_MS ?? 50);
const readAll = SqliteEventStore.prototype.readAll;
let read = 0;

SqliteEventStore.prototype.readAll = function slowReadAll(this: SqliteEventStore, options) {
  const inner = readAll.call(this, options);
  return (async function* () {
    for await (const event of inner) {
      read++;
      if (read === after) process.stderr.write(`slow-replay: ${read} events read, slowing down\n`);
      if (read > after) await new Promise((r) => setTimeout(r, ms));
      yield event;
    }
  })();
};

process.on('exit', () => process.stderr.write(`slow-replay: ${read} events read in all\n`));
