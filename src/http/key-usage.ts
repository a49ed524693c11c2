// Notes that an authenticated request used its credential, for "last used" (commands/credentials/usage.ts).
// On the request path this is one Map lookup and one comparison; at most once per key and hour the
// append is scheduled with setImmediate, after the request's own work, and its failure is only logged
// (a missed "last used" is not worth failing or slowing a partner's request for).
import { recordApiKeyUse, usageDue } from '../../commands/credentials/usage';
import type { Runtime } from '../runtime';

interface UsedCredential {
  _id: string;
  restaurant_id: string;
  last_used_at?: unknown;
}

/** Per runtime: key id → the last use recorded or being recorded (service clock, ms). */
const noted = new WeakMap<Runtime, Map<string, number>>();
const MAX_TRACKED = 100_000;

export function noteCredentialUse(rt: Runtime, credential: UsedCredential): void {
  let seen = noted.get(rt);
  if (!seen) {
    seen = new Map();
    noted.set(rt, seen);
  }
  const nowMs = rt.clock.now().getTime();
  let last = seen.get(credential._id);
  if (last === undefined) {
    // First use this process sees: the read model says when the last recorded one was.
    const recorded =
      typeof credential.last_used_at === 'string' ? Date.parse(credential.last_used_at) : Number.NaN;
    last = Number.isFinite(recorded) ? recorded : Number.NEGATIVE_INFINITY;
  }
  if (!usageDue(last === Number.NEGATIVE_INFINITY ? null : last, nowMs)) {
    if (!seen.has(credential._id)) seen.set(credential._id, last);
    return;
  }
  if (seen.size >= MAX_TRACKED) seen.clear();
  seen.set(credential._id, nowMs);
  const key = { _id: credential._id, restaurant_id: credential.restaurant_id };
  setImmediate(() => {
    recordApiKeyUse(rt, key, new Date(nowMs), { actor: `credential:${key._id}` }).catch((err: unknown) => {
      // Forgotten, so a later request tries again.
      if (seen.get(key._id) === nowMs) seen.delete(key._id);
      rt.logger.warn(
        { credential_id: key._id, err: { message: err instanceof Error ? err.message : String(err) } },
        'could not record a credential use',
      );
    });
  });
}
