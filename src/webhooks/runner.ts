// Runs the publisher for the `webhooks` role. Embedded: it follows the log in this process (catch-up
// then live) from its own checkpoint, kept in DATA_DIR/webhooks.checkpoint. Scaled out: it joins the
// EventStoreDB persistent subscription shared by every webhooks process. Either way a sweeper asks
// for due retries every second (service clock).
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints';
import { positionFromString, positionToString, type RecordedEvent } from '../ports/event-store';
import type { Runtime } from '../runtime';
import { CHECKPOINT_FILE, parseCheckpoint } from './checkpoint-file';
import { PUBLISHER_EVENT_PREFIXES, type PublisherOptions, WebhookPublisher } from './publisher';

export interface RunningWebhooks {
  publisher: WebhookPublisher;
  /**
   * Embedded: the log position of the last event the publisher has handled (its fan-out or request
   * decided and appended), null before the first; scaled out, always null. A read for tests (they wait
   * for it to reach an event before saying nothing more was sent) and diagnostics.
   */
  handledUpTo(): bigint | null;
  stop(): Promise<void>;
}

export { CHECKPOINT_FILE };
/** Under load the checkpoint is saved at most this often (each save writes, fsyncs and renames a file). */
export const CHECKPOINT_MIN_INTERVAL_MS = 100;
/**
 * Once the log goes quiet, the last event handled is saved within this (a trailing save on a timer):
 * a restart, even after SIGKILL, then replays nothing that was handled before the quiet.
 */
export const CHECKPOINT_IDLE_MS = 150;

/**
 * The saved position, or undefined when there is none to trust: no file (a first start), or a file
 * that does not hold a position (empty, cut short, garbage). Both start where a first start does
 * (`firstStart`: before the oldest endpoint, which every event that can still be sent comes after),
 * never from the log's head past events not handled, nor from its beginning (an empty file once
 * meant "the whole log", which replayed everything for nothing).
 */
async function readCheckpoint(
  dir: string,
  log: (err: unknown, what: string) => void,
): Promise<bigint | undefined> {
  let raw: string;
  try {
    raw = await readFile(join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const position = parseCheckpoint(raw);
  if (position !== undefined) return position;
  log(
    new Error(`${CHECKPOINT_FILE} holds no log position (${raw.trim().length} characters)`),
    'webhook checkpoint unreadable; starting as a first start does (before the oldest endpoint)',
  );
  return undefined;
}

/**
 * Saves the checkpoint durably without holding the event loop: every step is a libuv pool request
 * (fs.promises), so the fsyncs run beside requests, not in front of them. The position is written to
 * a temporary file and synced before the rename (else a power loss after the rename may bring the
 * file back empty), and the directory is synced after it (else the rename itself may be lost: the
 * older position comes back, which only replays a little more).
 */
export async function writeCheckpoint(dir: string, position: bigint): Promise<void> {
  const file = join(dir, CHECKPOINT_FILE);
  const temporary = `${file}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(positionToString(position));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  await syncDirectory(dir);
}

async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(dir, 'r');
  } catch (err) {
    // A platform that cannot open a directory (Windows) has nothing to sync this way.
    if (['EISDIR', 'EPERM', 'EACCES'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
  try {
    await handle.sync();
  } catch (err) {
    // Some file systems refuse fsync on a directory: the rename is then as durable as they make it.
    if (!['EINVAL', 'EBADF', 'EISDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    await handle.close();
  }
}

/**
 * The embedded publisher's checkpoint. It is only ever told a position once `publisher.handle` has
 * resolved for that event (what it decided is durable in the log: the fan-out appended) and events are
 * handled one at a time in log order, so a saved position never passes an event whose handling is not
 * durable, whenever the save happens. Saved right away when the last save is at least
 * CHECKPOINT_MIN_INTERVAL_MS old, else by a timer: within CHECKPOINT_IDLE_MS of the last event handled
 * (the timer never saves sooner than CHECKPOINT_MIN_INTERVAL_MS after the previous save, so under load
 * the file is written no more often than before). A save runs beside the handling (writeCheckpoint
 * never holds the event loop, and the next event does not wait for its fsync); one save at a time,
 * and one finishing while events were handled meanwhile leaves the timer to save them. `flush()`
 * saves what was handled, now, after the save in progress, and leaves no timer behind (the
 * subscription ends: a stop, a failure).
 */
class Checkpoint {
  private handled: bigint | null = null;
  private savedAt = Date.now();
  private timer: NodeJS.Timeout | null = null;
  /** The save in progress (it never rejects: a failed one is logged and tried again later). */
  private saving: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly dir: string,
    private saved: bigint | null,
    private readonly log: (err: unknown, what: string) => void,
  ) {}

  /** `position`'s event is handled and what it decided is durable (so is every earlier one's). */
  handledUpTo(position: bigint): void {
    this.handled = position;
    if (!this.saving && Date.now() - this.savedAt >= CHECKPOINT_MIN_INTERVAL_MS) this.save();
    else this.arm(CHECKPOINT_IDLE_MS);
  }

  /** Saves what was handled and returns once it is durable (throws when it could not be saved). */
  async flush(): Promise<void> {
    this.closed = true;
    this.disarm();
    await this.saving;
    if (this.handled === null || this.handled === this.saved) return;
    const position = this.handled;
    await writeCheckpoint(this.dir, position);
    this.saved = position;
  }

  private save(): void {
    this.disarm();
    const position = this.handled as bigint;
    this.savedAt = Date.now();
    this.saving = writeCheckpoint(this.dir, position).then(
      () => {
        this.saved = position;
      },
      // Not thrown (nobody awaits a save but flush()): the next event, the timer or flush() tries again.
      (err) => this.log(err, 'webhook checkpoint not saved'),
    );
    void this.saving.then(() => {
      this.saving = null;
      if (this.handled !== this.saved) this.arm(CHECKPOINT_IDLE_MS);
    });
  }

  private arm(ms: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // A save in progress arms the timer again when it ends, if events were handled meanwhile.
      if (this.saving || this.handled === null || this.handled === this.saved) return;
      const wait = this.savedAt + CHECKPOINT_MIN_INTERVAL_MS - Date.now();
      if (wait > 0) return this.arm(wait);
      this.save();
    }, ms);
    // Never what keeps a process (a test, a shutdown) alive: flush() clears it when the loop ends.
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Where a first start begins: before the oldest endpoint (nothing earlier can be sent), or the head. */
async function firstStart(rt: Runtime): Promise<bigint | null> {
  const [oldest] = await rt.docs
    .collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS)
    .find({}, { sort: { created_position: 1 }, limit: 1 });
  if (oldest) return positionFromString(oldest.created_position);
  return rt.events.headPosition();
}

export function startWebhooks(rt: Runtime, options: PublisherOptions = {}): RunningWebhooks {
  const publisher = new WebhookPublisher(rt, options);
  let stopped = false;
  const log = (err: unknown, what: string) =>
    rt.logger.error({ err: { message: (err as Error)?.message ?? String(err) } }, what);

  let stopFollowing: () => Promise<void> = async () => {};
  let following: Promise<void>;
  let handled: bigint | null = null;
  if (rt.config.store === 'embedded') {
    const dir = rt.config.dataDir;
    let close: (() => Promise<void>) | null = null;
    /** Ends the backoff before a restart early (a stop must not wait up to 10 s for it). */
    let wake: (() => void) | null = null;
    stopFollowing = async () => {
      wake?.();
      await close?.();
    };
    following = (async () => {
      let delay = 200;
      while (!stopped) {
        try {
          let after: bigint | null | undefined = await readCheckpoint(dir, log);
          // A checkpoint past the log's head belongs to another log (events.sqlite restored from an
          // older backup, the checkpoint left newer): trusted, the events appended up to it would be
          // skipped, never published. It counts as none.
          const head = after === undefined ? null : await rt.events.headPosition();
          if (after !== undefined && after !== null && (head === null || after > head)) {
            log(
              new Error(`${CHECKPOINT_FILE} is at ${after}, past the log's head (${head ?? 'empty'})`),
              'webhook checkpoint past the log; starting as a first start does (before the oldest endpoint)',
            );
            after = undefined;
          }
          if (after === undefined) {
            after = await firstStart(rt);
            if (after !== null) await writeCheckpoint(dir, after);
          }
          // What the previous run handed out and never attempted is asked for now, before following
          // the log (publisher.askForUnfinished): not when its lease runs out.
          await publisher.askForUnfinished();
          // A stop during the first start found nothing to close: it must not be left waiting for an
          // event on a quiet log.
          if (stopped) return;
          const sub = rt.events.subscribe({ after, eventTypePrefixes: PUBLISHER_EVENT_PREFIXES });
          close = () => sub.close();
          // A replay after a crash is harmless (every step is idempotent), only slower: the checkpoint
          // keeps it short (the event in hand at a kill, and about the last CHECKPOINT_IDLE_MS handled).
          const checkpoint = new Checkpoint(dir, after, log);
          try {
            for await (const event of sub as AsyncIterable<RecordedEvent>) {
              // Checked in the same turn as handle()'s own check of the publisher's stop, which stop()
              // sets after this flag: handle() never skips an event for a stop, so the position saved
              // after it is that of an event handled.
              if (stopped) break;
              await publisher.handle(event);
              checkpoint.handledUpTo(event.position);
              handled = event.position;
            }
          } finally {
            // A stop, or a failure of the event after the last one handled: what was handled is durable.
            await checkpoint.flush();
          }
          return;
        } catch (err) {
          if (stopped) return;
          log(err, 'webhook publisher failed; restarting');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, delay);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = null;
          delay = Math.min(delay * 2, 10_000);
        }
      }
    })();
  } else {
    following = (async () => {
      const { consumePersistent } = await import('./esdb-consumer');
      const consumer = consumePersistent(
        rt.config.eventstoreUrl as string,
        PUBLISHER_EVENT_PREFIXES,
        (event) => publisher.handle(event),
        (err) => log(err, 'webhook consumer error'),
        { onWarning: (message, detail) => rt.logger.warn(detail, message) },
      );
      stopFollowing = () => consumer.stop();
      await consumer.done;
    })();
  }

  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = sweeping.then(() => publisher.sweep()).catch((err) => log(err, 'webhook sweep failed'));
  }, 1_000);
  timer.unref();

  return {
    publisher,
    handledUpTo: () => handled,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await stopFollowing();
      await publisher.stop();
      await sweeping;
      await following.catch(() => undefined);
    },
  };
}
