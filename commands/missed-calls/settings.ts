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
    let ok = false;
    try {
      const parsed = new URL(url);
      ok = (parsed.protocol === 'https:' || parsed.protocol === 'http:') && url.length <= 2000;
    } catch {
      ok = false;
    }
    if (!ok)
      issues.push({
        path: 'booking_url',
        code: 'invalid_format',
        message: 'booking_url must be an http(s) URL',
      });
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
