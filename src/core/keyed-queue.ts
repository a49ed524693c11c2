// Runs tasks one after the other per key, within this process. Correctness never depends on it (every
// append carries an expected revision); it only keeps concurrent requests for the same stream from
// losing optimistic-concurrency races and retrying (runCommand queues each stream's commands, the
// reservations' capacity handler each capacity stream's), which made a busy day slow and answered
// 409 to the requests that lost every retry.
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    // Forget the key once nothing waits behind this task, so the map does not grow with every day.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
