// The missed-calls module's hooks into the platform: the bootstrap file's `whatsapp_phone_number_id`
// and `booking_url` of each restaurant, the operator commands, and the destruction of caller keys past
// their cooldown.
import { IN_FLIGHT_MS } from '../commands/missed-calls/decide';
import { COOLDOWN_MS } from '../commands/missed-calls/events';
import { checkSettings, configureSettings, type MissedCallSettings } from '../commands/missed-calls/settings';
import { RESTAURANTS } from '../projections/restaurants';
import {
  type BootstrapFile,
  registerBootstrapSection,
  type SectionApplier,
  type SectionCheck,
} from './bootstrap';
import { registerMissedCallCommands } from './cli/missed-call-commands';
import { callerPeriod, destroyExpiredCallerKeys, SWEEP_LOOKBACK_PERIODS } from './privacy/caller-ids';
import type { Runtime } from './runtime';
import { registerScheduledJob } from './scheduler';

/** Validates every restaurant's settings first, so a faulty file changes nothing. */
function planMissedCallSettings(file: BootstrapFile): { id: string; changes: Partial<MissedCallSettings> }[] {
  const restaurants = file.restaurants ?? [];
  const problems: string[] = [];
  const plans: { id: string; changes: Partial<MissedCallSettings> }[] = [];
  for (const [i, r] of restaurants.entries()) {
    const changes: Partial<MissedCallSettings> = {};
    if (r.whatsapp_phone_number_id !== undefined)
      changes.whatsapp_phone_number_id = r.whatsapp_phone_number_id;
    if (r.booking_url !== undefined) changes.booking_url = r.booking_url;
    if (r.follow_up_max_age_hours !== undefined) changes.follow_up_max_age_hours = r.follow_up_max_age_hours;
    if (!Object.keys(changes).length) continue;
    for (const issue of checkSettings(changes))
      problems.push(`restaurants.${i}.${issue.path}: ${issue.message}`);
    plans.push({ id: r.id, changes });
  }
  if (problems.length)
    throw new Error(
      `the bootstrap file's missed-call settings are invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  return plans;
}

export const checkMissedCallSettings: SectionCheck = async (_deps, file) => {
  planMissedCallSettings(file);
};

export const applyMissedCallSettings: SectionApplier = async (deps, file, meta) => {
  const plans = planMissedCallSettings(file);
  let changed = 0;
  for (const p of plans) changed += (await configureSettings(deps, p.id, p.changes, meta)).appended.length;
  return { notes: changed ? [`missed-call settings: ${changed} restaurant(s) changed`] : [] };
};

const sweeps = new WeakMap<Runtime, { through: number | null; since: number }>();

/**
 * Destroys the caller keys whose period is over (src/privacy/caller-ids.ts): after it, the caller ids
 * those keys made are opaque for good. The first sweep of a process looks SWEEP_LOOKBACK_PERIODS back
 * (30 days); later ones start where the last stopped. The first release's per-restaurant keys go once
 * this process has run a whole cooldown: every slot taken under them (before this code ran) is over.
 */
export async function sweepCallerKeys(rt: Runtime): Promise<string | null> {
  const now = rt.clock.now();
  let state = sweeps.get(rt);
  if (state === undefined) {
    state = { through: null, since: now.getTime() };
    sweeps.set(rt, state);
  }
  const restaurants = await rt.docs.collection<{ _id: string }>(RESTAURANTS).find({});
  const done = await destroyExpiredCallerKeys(
    rt.keys,
    restaurants.map((r) => r._id),
    now,
    {
      from: state.through === null ? callerPeriod(now) - 2 - SWEEP_LOOKBACK_PERIODS : state.through + 1,
      legacy: now.getTime() - state.since >= COOLDOWN_MS + IN_FLIGHT_MS,
    },
  );
  state.through = done.through;
  return done.destroyed ? `destroyed ${done.destroyed} caller key(s) past their cooldown` : null;
}

export function registerMissedCallsModule(): void {
  registerBootstrapSection(applyMissedCallSettings, checkMissedCallSettings);
  registerMissedCallCommands();
  registerScheduledJob({
    name: 'missed-call-caller-keys',
    schedule: '*/10 * * * *',
    run: (rt) => sweepCallerKeys(rt),
  });
}
