// A restaurant's missed-call settings (stream `missed-call-settings-<restaurant>`): its WhatsApp
// sending number at the provider, the booking link its templates may carry, and how old a call may be
// and still get a follow-up. Set by the bootstrap
// file (`whatsapp_phone_number_id`, `booking_url` of a restaurant entry) or `missed-calls configure`.

import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { type Issue, validationError } from '../../src/core/errors';
import { hasSpaceOrControl } from '../../src/core/urls';
import type { WriteDeps } from '../../src/core/write-deps';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { settingsStream } from './events';

export interface MissedCallSettings {
  whatsapp_phone_number_id: string | null;
  booking_url: string | null;
  /**
   * A call whose `occurred_at` is more than this many hours before the service clock is recorded
   * with outcome SKIPPED_TOO_OLD and no message: a follow-up about a call days old is not one.
   */
  follow_up_max_age_hours: number;
}

export const DEFAULT_FOLLOW_UP_MAX_AGE_HOURS = 24;
/** A week: beyond that no follow-up makes sense. */
export const MAX_FOLLOW_UP_MAX_AGE_HOURS = 168;

export const defaultSettings: MissedCallSettings = {
  whatsapp_phone_number_id: null,
  booking_url: null,
  follow_up_max_age_hours: DEFAULT_FOLLOW_UP_MAX_AGE_HOURS,
};

/** Too old for a follow-up: more than the limit before `now` (at exactly the limit it is still sent). */
export const tooOldForFollowUp = (occurredAt: string, now: Date, maxAgeHours: number) =>
  now.getTime() - Date.parse(occurredAt) > maxAgeHours * 3_600_000;

export const evolveSettings = (state: MissedCallSettings, e: RecordedEvent): MissedCallSettings =>
  e.type === 'MissedCallSettingsConfigured'
    ? { ...state, ...((e.data as { changes: Partial<MissedCallSettings> }).changes ?? {}) }
    : state;

const PHONE_NUMBER_ID = /^\d{1,32}$/;

export function checkSettings(changes: Partial<MissedCallSettings>): Issue[] {
  const issues: Issue[] = [];
  const id = changes.whatsapp_phone_number_id;
  if (id !== undefined && id !== null && !PHONE_NUMBER_ID.test(id))
    issues.push({
      path: 'whatsapp_phone_number_id',
      code: 'invalid_format',
      message: 'whatsapp_phone_number_id is the numeric id WhatsApp gives the sending number (digits only)',
    });
  const url = changes.booking_url;
  if (url !== undefined && url !== null) {
    let message: string | null = null;
    try {
      const parsed = new URL(url);
      if (!(parsed.protocol === 'https:' || parsed.protocol === 'http:') || url.length > 2000)
        message = 'booking_url must be an http(s) URL';
      // The link goes out in every caller's message: credentials in it would be handed to each of
      // them (and printed by `missed-calls configure`).
      else if (parsed.username || parsed.password)
        message = 'booking_url must not carry a user name or password: it is sent to every caller';
      // The URL parser drops tabs and new lines and accepts spaces, but the link is sent as written:
      // the guest would get a broken link.
      // (Unicode spaces too: a no-break space would also break the link as the guest sees it.)
      else if (hasSpaceOrControl(url) || /\s/u.test(url))
        message = 'booking_url must not contain spaces, tabs, new lines or control characters';
    } catch {
      message = 'booking_url must be an http(s) URL';
    }
    if (message) issues.push({ path: 'booking_url', code: 'invalid_format', message });
  }
  const age = changes.follow_up_max_age_hours;
  if (age !== undefined && !(Number.isInteger(age) && age >= 1 && age <= MAX_FOLLOW_UP_MAX_AGE_HOURS))
    issues.push({
      path: 'follow_up_max_age_hours',
      code: 'invalid_value',
      message: `follow_up_max_age_hours is a whole number of hours from 1 to ${MAX_FOLLOW_UP_MAX_AGE_HOURS}`,
    });
  return issues;
}

/** Only what differs becomes an event: applying the same settings twice appends nothing. */
export function decideSettings(
  state: MissedCallSettings,
  restaurantId: string,
  changes: Partial<MissedCallSettings>,
  at: string,
): NewEvent[] {
  const issues = checkSettings(changes);
  if (issues.length) throw validationError(issues, 'The missed-call settings are invalid');
  const diff: Partial<MissedCallSettings> = {};
  for (const key of ['whatsapp_phone_number_id', 'booking_url', 'follow_up_max_age_hours'] as const)
    if (changes[key] !== undefined && changes[key] !== state[key])
      Object.assign(diff, { [key]: changes[key] });
  return Object.keys(diff).length
    ? [{ type: 'MissedCallSettingsConfigured', data: { restaurant_id: restaurantId, changes: diff, at } }]
    : [];
}

export async function loadSettings(deps: WriteDeps, restaurantId: string): Promise<MissedCallSettings> {
  const events = await deps.events.readStream(settingsStream(restaurantId));
  return events.reduce(evolveSettings, defaultSettings);
}

export const configureSettings = (
  deps: WriteDeps,
  restaurantId: string,
  changes: Partial<MissedCallSettings>,
  meta: CommandMeta,
) =>
  runCommand<MissedCallSettings>(deps.events, {
    stream: settingsStream(restaurantId),
    initial: defaultSettings,
    evolve: evolveSettings,
    decide: (s) => decideSettings(s, restaurantId, changes, deps.clock.now().toISOString()),
    metadata: { ...meta, restaurant_id: restaurantId },
    clock: deps.clock,
  });
