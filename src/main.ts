// `npm start`: the API on the embedded default (or scaled-out roles with STORE=eventstoredb).
import { writeSync } from 'node:fs';
import { startService } from './app';
import { ConfigError, loadConfig } from './config';
import { fullDisk } from './damaged-files';
import { lockDataDir } from './data-dir-lock';
import { createLogger } from './logger';
import { CatchUpStopped } from './projection/runner';

let dataDirLock: (() => void) | null = null;
/** Embedded: DATA_DIR, for naming it when the start fails on a full disk. */
let embeddedDataDir: string | null = null;

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`couvert: configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  for (const warning of config.warnings) console.error(`couvert: warning: ${warning}`);
  // One server per DATA_DIR (the CLI takes no lock): held until the process ends. Kept referenced:
  // a connection the garbage collector takes is closed, and its lock goes with it.
  if (config.store === 'embedded') {
    embeddedDataDir = config.dataDir;
    dataDirLock = lockDataDir(config.dataDir);
    process.on('exit', () => dataDirLock?.());
  }
  // Handlers first: a signal that arrives while starting or just after the banner must still stop cleanly.
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  let stopping = false;
  // A signal while the embedded start replays the log into the read models stops the replay (it may
  // take minutes on a large log, past an orchestrator's stop grace): the start then fails with
  // CatchUpStopped, what it opened is closed, and the process exits as stopped (below).
  const starting = new AbortController();
  let signalledAt = 0;
  const shutdown = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C means "now": in-flight requests are cut and the stores are not closed.
      console.log(`couvert: second ${signal}, exiting without waiting`);
      process.exit(130);
    }
    stopping = true;
    console.log(`couvert: ${signal} received, finishing in-flight requests (again to exit at once)`);
    // While starting, the replay stops; the rest of the start finishes first (so a demo key it made
    // is printed), then stops below.
    if (!service) {
      signalledAt = performance.now();
      starting.abort();
      return;
    }
    service.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    service = await startService(config, { signal: starting.signal });
  } catch (err) {
    if (!(err instanceof CatchUpStopped)) throw err;
    // The stop's last line, as a stop after the start writes it (src/app.ts); written before the exit.
    createLogger(config.logLevel, { write: (line: string) => writeSync(1, line) }).info(
      {
        duration_ms: Math.round(performance.now() - signalledAt),
        during: 'start',
        replayed_events: err.applied,
      },
      'stopped',
    );
    process.exit(0);
  }
  const prefix = `${service.url}/api/partner/v1`;
  const lines = [`Couvert is listening on ${service.url} (store: ${config.store}, data: ${config.dataDir})`];
  for (const note of service.notes) lines.push(`  ${note}`);
  if (service.demo?.token) {
    lines.push(
      `Demo restaurant ${service.demo.restaurantId} with an API key holding every scope (shown once, stored hashed):`,
      `  ${service.demo.token}`,
      'Try it:',
      `  curl -s -H "Authorization: Bearer ${service.demo.token}" ${prefix}/me`,
    );
  } else if (service.demo) {
    lines.push(
      config.store === 'embedded'
        ? `Demo restaurant ${service.demo.restaurantId}; its key was printed when it was created (stored hashed, not shown again).`
        : `Demo restaurant ${service.demo.restaurantId}; scaled out no key is made at start (it would land in container logs).`,
      `  New key: npm run cli -- keys create --restaurant ${service.demo.restaurantId} --name me --scopes ALL`,
    );
  }
  lines.push(`OpenAPI: ${prefix}/openapi.json`);
  // Printed even when a signal came during the start: a demo key made by it is shown only here.
  console.log(lines.join('\n'));
  if (stopping) {
    await service.stop();
    process.exit(0);
  }
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`couvert: configuration error: ${err.message}`);
    process.exit(2);
  }
  // The opening checks name a full DATA_DIR; a disk that fills later in the start (a first start's
  // month of demo activity, a large BOOTSTRAP_FILE) failed with SQLite's bare "database or disk is full".
  const explained =
    (embeddedDataDir !== null &&
      fullDisk(
        err,
        embeddedDataDir,
        'each append is one transaction, so what the start wrote before is whole and the next start goes on from it',
      )) ||
    err;
  console.error(
    `couvert: failed to start: ${explained instanceof Error ? explained.message : String(explained)}`,
  );
  process.exit(1);
});
