// Restaurants set up for missed-call tests: one with the feature, approved WhatsApp templates, a
// booking link and a dinner shift to book; one without the feature; one with the feature and no
// template; and another restaurant for tenancy. Keys for each.
import type { EmbeddedDocumentStore } from '../../src/adapters/document-store/embedded';
import { FixedClock } from '../../src/core/clock';
import type { Logger } from '../../src/logger';
import { dinnerShift } from './reservations';
import { startTestService, type TestService } from './service';

export const MC_TOKENS = {
  demo: 'couvert_pk_mc_demo_0000000000000000000000001',
  other: 'couvert_pk_mc_other_000000000000000000000002',
  off: 'couvert_pk_mc_off_00000000000000000000000003',
  bare: 'couvert_pk_mc_bare_0000000000000000000000004',
  noScope: 'couvert_pk_mc_noscope_0000000000000000000005',
};

const SCOPES = [
  'MISSED_CALLS_WRITE',
  'CUSTOMERS_READ',
  'CUSTOMERS_WRITE',
  'RESERVATIONS_READ',
  'RESERVATIONS_WRITE',
  'RESERVATIONS_CANCEL',
  'CATALOG_READ',
];

/** Tuesday 2 June 2026, noon in Paris. */
export const MC_NOW = '2026-06-02T10:00:00Z';

export const TEMPLATES = [
  {
    id: 'tpl_missed',
    type: 'MISSED_CALL',
    channel: 'WHATSAPP',
    status: 'APPROVED',
    name: 'missed_call_fr',
    body: "Bonjour {{guest_name}}, désolés d'avoir manqué votre appel ! Réservez chez {{restaurant_name}} : {{booking_link}}",
  },
  {
    id: 'tpl_booked',
    type: 'MISSED_CALL_WITH_RESERVATION',
    channel: 'WHATSAPP',
    status: 'APPROVED',
    body: 'Bonjour {{guest_name}}, nous vous attendons {{reservation_date}} à {{reservation_time}} chez {{restaurant_name}} !',
  },
  // Neither may be sent: not approved, and not WhatsApp.
  {
    id: 'tpl_pending',
    type: 'MISSED_CALL_WITH_RESERVATION',
    channel: 'WHATSAPP',
    status: 'PENDING',
    body: 'pending',
  },
  { id: 'tpl_sms', type: 'MISSED_CALL', channel: 'SMS', status: 'APPROVED', body: 'sms' },
];

const restaurant = (id: string, token: string, extra: Record<string, unknown>) => ({
  id,
  name: id === 'rest_demo' ? 'Le Demo' : `Restaurant ${id}`,
  slug: id.replace(/_/g, '-'),
  country_code: 'FR',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  api_keys: [{ id: `key_${id}`, name: id, token, scopes: SCOPES }],
  ...extra,
});

export function missedCallBootstrap(demo: Record<string, unknown> = {}) {
  return {
    restaurants: [
      restaurant('rest_demo', MC_TOKENS.demo, {
        features: ['MISSED_CALLS'],
        message_templates: TEMPLATES,
        booking_url: 'https://le-demo.example/book',
        whatsapp_phone_number_id: '106540352242922',
        shifts: [dinnerShift],
        tables: [
          { id: 'tbl_1', name: '1', min_pax: 1, max_pax: 4 },
          { id: 'tbl_2', name: '2', min_pax: 1, max_pax: 4 },
          { id: 'tbl_3', name: '3', min_pax: 1, max_pax: 4 },
        ],
        ...demo,
      }),
      restaurant('rest_other', MC_TOKENS.other, {
        features: ['MISSED_CALLS'],
        message_templates: TEMPLATES,
        booking_url: 'https://other.example/book',
      }),
      restaurant('rest_off', MC_TOKENS.off, { features: [], message_templates: TEMPLATES }),
      restaurant('rest_bare', MC_TOKENS.bare, { features: ['MISSED_CALLS'] }),
      {
        ...restaurant('rest_noscope', MC_TOKENS.noScope, {}),
        api_keys: [{ id: 'key_noscope', name: 'n', token: MC_TOKENS.noScope, scopes: ['CUSTOMERS_READ'] }],
      },
    ],
  };
}

export type MissedCallService = TestService & { clock: FixedClock };

export async function startMissedCallService(
  env: Record<string, string> = {},
  demo: Record<string, unknown> = {},
): Promise<MissedCallService> {
  const clock = new FixedClock(MC_NOW);
  const svc = await startTestService({
    bootstrap: missedCallBootstrap(demo),
    clock,
    env: { TEST_CLOCK: 'true', ...env },
  });
  return Object.assign(svc, { clock });
}

/** Every document of every read model as text (the raw store: every projection version included). */
export async function readModelsText(svc: TestService): Promise<string> {
  await svc.rt.projections.catchUp();
  const docs = svc.rt.projections.docs as EmbeddedDocumentStore;
  const out: string[] = [];
  for (const name of docs.collectionNames())
    out.push(name, JSON.stringify(await docs.collection(name).find({})));
  return out.join('\n');
}

/** A missed-call service on a data directory the test keeps (to restart on it), logging to `logger`. */
export function startMissedCallServiceIn(dataDir: string, logger: Logger): Promise<TestService> {
  return startTestService({
    bootstrap: missedCallBootstrap(),
    dataDir,
    clock: new FixedClock(MC_NOW),
    logger,
    env: { RATE_LIMIT_PER_MINUTE: '1000000' },
  });
}

export const report = (svc: TestService, body: Record<string, unknown>, token = MC_TOKENS.demo) =>
  svc.api('POST', '/missed-calls', { token, body });

/** Moves the service clock through the test-clock route (what a partner's test would do). */
export const advance = (svc: TestService, seconds: number) =>
  svc.api('POST', '/__test/clock', { body: { advance_seconds: seconds } });
