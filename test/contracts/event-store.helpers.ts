// Small tools for event-store tests. uvu has no per-test timeout, so every wait here has its own.
import { randomUUID } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { EventMetadata, NewEvent, RecordedEvent } from '../../src/ports/event-store';

/**
 * How long a test waits for what must come (a live event, a writer's acknowledgement) before it fails:
 * a hang bound only, never a deadline a loaded 2-core CI machine could miss (as REQUEST_HANG_MS).
 */
export const HANG_MS = 120_000;

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The next `n` events of a live iterator, each within `ms`. */
export async function take(
  it: AsyncIterator<RecordedEvent>,
  n: number,
  ms: number,
  what = 'events',
): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  while (out.length < n) {
    const next = await withTimeout(it.next(), ms, `${what} (${out.length} of ${n} received)`);
    if (next.done) throw new Error(`subscription ended after ${out.length} of ${n} ${what}`);
    out.push(next.value);
  }
  return out;
}

/**
 * Asserts that nothing arrives within `ms`. The pending next() is left to the caller, who closes
 * the subscription (which settles it).
 */
export async function expectQuiet(it: AsyncIterator<RecordedEvent>, ms: number): Promise<void> {
  const next = it.next();
  const outcome = await Promise.race([
    next.then((r) => (r.done ? 'done' : r.value)),
    new Promise<'quiet'>((r) => setTimeout(() => r('quiet'), ms)),
  ]);
  if (outcome !== 'quiet' && outcome !== 'done')
    assert.unreachable(`unexpected event ${outcome.stream}@${outcome.revision} (${outcome.type})`);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Runs `fn` (which may throw synchronously or reject) and asserts the error's class. */
export async function expectError<E extends Error>(
  fn: () => unknown,
  type: abstract new (...args: never[]) => E,
  what: string,
): Promise<E> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof type) return err;
    assert.unreachable(
      `${what}: expected ${type.name}, got ${(err as Error)?.name}: ${(err as Error)?.message}`,
    );
  }
  return assert.unreachable(`${what}: expected ${type.name}, nothing was thrown`) as never;
}

export function ev(
  type: string,
  data: Record<string, unknown> = {},
  metadata?: EventMetadata,
  id?: string,
): NewEvent {
  return { type, data, ...(metadata ? { metadata } : {}), ...(id ? { id } : {}) };
}

/** A unique prefix so tests never see each other's streams, even on a shared server. */
export function namespace(): string {
  return `t${randomUUID().slice(0, 8)}-`;
}

export function positionsStrictlyIncrease(events: RecordedEvent[]): boolean {
  return events.every((e, i) => i === 0 || e.position > events[i - 1]!.position);
}

export function keys(events: RecordedEvent[]): string[] {
  return events.map((e) => `${e.stream}@${e.revision}`);
}
