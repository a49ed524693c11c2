// Requests come first. Work nobody waits for now (a CSV import's next slice) gives way while requests
// are being served in this process: it starts its next slice once none is in flight, or after
// GIVE_WAY_MAX_MS at the most, so it is never starved by a steady stream of requests. A request then
// waits for at most one slice of such work, not for a queue of them.
let inFlight = 0;
let waiting: (() => void)[] = [];

/** The HTTP server calls this as a request starts, and requestDone() once it is answered. */
export function requestStarted(): void {
  inFlight++;
}

export function requestDone(): void {
  if (inFlight > 0) inFlight--;
  if (inFlight === 0 && waiting.length > 0) {
    const go = waiting;
    waiting = [];
    for (const resolve of go) resolve();
  }
}

/** How long background work waits for requests at the most before its next slice. */
export const GIVE_WAY_MAX_MS = 20;

/** Resolves at once when no request is in flight; else when none is, or after `maxMs`. */
export function giveWayToRequests(maxMs = GIVE_WAY_MAX_MS): Promise<void> | undefined {
  if (inFlight === 0) return undefined;
  return new Promise<void>((resolve) => {
    const go = () => {
      clearTimeout(timer);
      resolve();
    };
    // Gone on at the bound: its waiter leaves too, or a request held in flight for long (a slow upload)
    // would keep one per slice until it ends.
    const timer = setTimeout(() => {
      const i = waiting.indexOf(go);
      if (i >= 0) waiting.splice(i, 1);
      resolve();
    }, maxMs);
    waiting.push(go);
  });
}

/** Background waits still waiting for requests (tests). */
export const waitersForRequests = (): number => waiting.length;

/** Requests in flight now (tests). */
export const requestsInFlight = (): number => inFlight;
