// The missed-calls module's hooks into the platform: the bootstrap file's `whatsapp_phone_number_id`
// and `booking_url` of each restaurant, and the operator commands.
import { checkSettings, configureSettings, type MissedCallSettings } from '../commands/missed-calls/settings';
import { registerBootstrapSection, type SectionApplier } from './bootstrap';
import { registerMissedCallCommands } from './cli/missed-call-commands';

/** Validates every restaurant's settings first, so a faulty file changes nothing. */
export const applyMissedCallSettings: SectionApplier = async (deps, file, meta) => {
  const restaurants = file.restaurants ?? [];
  const problems: string[] = [];
  const plans: { id: string; changes: Partial<MissedCallSettings> }[] = [];
  for (const [i, r] of restaurants.entries()) {
    const changes: Partial<MissedCallSettings> = {};
    if (r.whatsapp_phone_number_id !== undefined)
      changes.whatsapp_phone_number_id = r.whatsapp_phone_number_id;
    if (r.booking_url !== undefined) changes.booking_url = r.booking_url;
    if (!Object.keys(changes).length) continue;
    for (const issue of checkSettings(changes))
      problems.push(`restaurants.${i}.${issue.path}: ${issue.message}`);
    plans.push({ id: r.id, changes });
  }
  if (problems.length)
    throw new Error(
      `the bootstrap file's missed-call settings are invalid:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  let changed = 0;
  for (const p of plans) changed += (await configureSettings(deps, p.id, p.changes, meta)).appended.length;
  return { notes: changed ? [`missed-call settings: ${changed} restaurant(s) changed`] : [] };
};

export function registerMissedCallsModule(): void {
  registerBootstrapSection(applyMissedCallSettings);
  registerMissedCallCommands();
}
