// A restaurant's missed-call settings (stream `missed-call-settings-<restaurant>`): its WhatsApp
// sending number at the provider and the booking link its templates may carry. Set by the bootstrap
// file (`whatsapp_phone_number_id`, `booking_url` of a restaurant entry) or `missed-calls configure`.
import { runCommand } from '../../src/core/command';
import type { CommandMeta } from '../../src/core/command-meta';
import { type Issue, validationError } from '../../src/core/errors';
import type { WriteDeps } from '../../src/core/write-deps';
import type { NewEvent, RecordedEvent } from '../../src/ports/event-store';
import { settingsStream } from './events';

export interface MissedCallSettings {
  whatsapp_phone_number_id: string | null;
  booking_url: string | null;
}

export const defaultSettings: MissedCallSettings = { whatsapp_phone_number_id: null, booking_url: null };

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
      else if ([...url].some((c) => /\s/.test(c) || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
        message = 'booking_url must not contain spaces, tabs, new lines or control characters';
    } catch {
      message = 'booking_url must be an http(s) URL';
    }
    if (message) issues.push({ path: 'booking_url', code: 'invalid_format', message });
  }
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
  for (const key of ['whatsapp_phone_number_id', 'booking_url'] as const)
    if (changes[key] !== undefined && changes[key] !== state[key]) diff[key] = changes[key];
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
