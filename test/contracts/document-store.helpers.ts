// Shared pieces of the document-store contract: how a test gets a store, fixtures, assertions.
import type { Test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Collection, Doc, DocumentStore } from '../../src/ports/document-store';

export interface DocumentStoreHarness {
  /** An empty store for one test. */
  open(): Promise<DocumentStore>;
  /** Ends a test's store; default close(). MongoDB drops the test's database first. */
  release?(store: DocumentStore): Promise<void>;
}

export interface DocumentStoreContractOptions {
  /** Register every test as skipped; the caller prints why. */
  skip?: string;
  /** fast-check runs of the index-versus-scan property (each writes a few dozen documents). */
  propertyRuns?: number;
  /** Longest a single test may take. Default 30 s. */
  testTimeoutMs?: number;
}

export type Register = (name: string, body: (store: DocumentStore) => Promise<void>) => void;

export function registrar(
  test: Test,
  harness: DocumentStoreHarness,
  options: DocumentStoreContractOptions,
): Register {
  // A hang bound (a body of property runs on a loaded machine is slow, not wrong).
  const timeout = options.testTimeoutMs ?? 120_000;
  return (name, body) => {
    if (options.skip) {
      test.skip(name, () => undefined);
      return;
    }
    test(name, async () => {
      const store = await withTimeout(harness.open(), timeout, `opening a store for "${name}"`);
      try {
        await withTimeout(body(store), timeout, name);
      } finally {
        await (harness.release ?? ((s) => s.close()))(store);
      }
    });
  };
}

/** uvu has no per-test timeout: a hung promise would end the whole run without a word. */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: error classes take any constructor arguments
type ErrorClass<E extends Error> = abstract new (...args: any[]) => E;

export async function rejects<E extends Error>(promise: Promise<unknown>, type: ErrorClass<E>): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  if (caught === undefined) assert.unreachable(`expected ${type.name}, but the call succeeded`);
  if (!(caught instanceof type)) {
    assert.unreachable(
      `expected ${type.name}, got ${(caught as Error)?.name}: ${(caught as Error)?.message}`,
    );
  }
  return caught as E;
}

export interface Person extends Doc {
  name?: string;
  age?: number;
  city?: string;
  tags?: string[];
  address?: { city: string; zip: string };
  visits?: { at: string; covers: number }[];
  email?: string | null;
  [k: string]: unknown;
}

export const people = (): Person[] => [
  {
    _id: 'p1',
    name: 'Ada',
    age: 36,
    city: 'Paris',
    tags: ['vip', 'fr'],
    address: { city: 'Paris', zip: '75001' },
    visits: [
      { at: '2026-01-01', covers: 2 },
      { at: '2026-02-01', covers: 4 },
    ],
  },
  {
    _id: 'p2',
    name: 'Bob',
    age: 25,
    city: 'Lyon',
    tags: ['fr'],
    address: { city: 'Lyon', zip: '69001' },
    visits: [],
  },
  {
    _id: 'p3',
    name: 'Cleo',
    age: 36,
    city: 'Paris',
    tags: [],
    address: { city: 'Paris', zip: '75002' },
    email: null,
  },
  {
    _id: 'p4',
    name: 'dan',
    age: 52,
    city: 'Nice',
    address: { city: 'Nice', zip: '06000' },
    visits: [{ at: '2026-03-01', covers: 6 }],
  },
  {
    _id: 'p5',
    name: 'Eve',
    age: 19,
    city: 'Lyon',
    tags: ['vip'],
    address: { city: 'Lyon', zip: '69002' },
    email: 'eve@x.test',
  },
];

export async function seeded(store: DocumentStore, name = 'people'): Promise<Collection<Person>> {
  const c = store.collection<Person>(name);
  await c.insertMany(people());
  return c;
}

export async function ids(found: Promise<Doc[]>): Promise<string[]> {
  return (await found).map((d) => d._id).sort();
}

export async function snapshot(c: Collection): Promise<Doc[]> {
  return c.find({}, { sort: { _id: 1 } });
}
