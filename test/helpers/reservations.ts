// A restaurant set up for reservation tests: two rooms, tables of several sizes, a dinner shift, a
// lunch shift that needs approval and a deposit, and keys with every combination of scopes the
// reservation routes care about.
import { FixedClock } from '../../src/core/clock';
import { demoBootstrap, type StartOptions, startTestService, type TestService } from './service';

export const TOKENS = {
  full: 'couvert_pk_res_full_000000000000000000000001',
  noSensitive: 'couvert_pk_res_plain_00000000000000000000002',
  readOnly: 'couvert_pk_res_read_000000000000000000000003',
  other: 'couvert_pk_res_other_00000000000000000000004',
  noCancel: 'couvert_pk_res_nocancel_000000000000000005',
  catalogOnly: 'couvert_pk_res_catalog_0000000000000000006',
};

const ALL = [
  'CATALOG_READ',
  'AVAILABILITY_READ',
  'RESERVATIONS_READ',
  'RESERVATIONS_READ_SENSITIVE',
  'RESERVATIONS_WRITE',
  'RESERVATIONS_CANCEL',
  'RESERVATIONS_FORCE_INSERT',
  'RESERVATIONS_FORCE_CONFIRM',
  'CUSTOMERS_READ',
  'CUSTOMERS_WRITE',
  'WEBHOOKS_WRITE',
  'MISSED_CALLS_WRITE',
];

/** Tuesday 2 June 2026 at noon in Paris: the clock every reservation test starts from. */
export const NOW = '2026-06-02T10:00:00Z';
/** A dinner slot the next day (Paris is UTC+2 in June). */
export const DINNER = '2026-06-03T19:00:00+02:00';

export const dinnerShift = {
  id: 'shift_dinner',
  name: 'Dinner',
  start_time: '19:00',
  end_time: '22:00',
  days_of_week: [1, 2, 3, 4, 5, 6, 7],
  slot_interval_minutes: 15,
  duration_minutes: 90,
  max_covers: 60,
  requires_room_selection: false,
  requires_approval: false,
  deposit: null,
};

export const lunchShift = {
  ...dinnerShift,
  id: 'shift_lunch',
  name: 'Lunch',
  start_time: '12:00',
  end_time: '14:00',
  requires_approval: true,
  deposit: { amount_per_cover: 1500, min_party_size: 6, payment_mode: 'SOFT_PREAUTH' },
};

export const brunchShift = {
  ...dinnerShift,
  id: 'shift_brunch',
  name: 'Brunch',
  start_time: '10:00',
  end_time: '11:00',
  deposit: { amount_per_cover: 1000, min_party_size: 1, payment_mode: 'CHARGE' },
};

/** Runs past midnight: its 00:30 start belongs to the service day before. */
export const lateShift = {
  ...dinnerShift,
  id: 'shift_late',
  name: 'Late',
  start_time: '23:00',
  end_time: '00:30',
  slot_interval_minutes: 30,
  duration_minutes: 60,
};

/** Guests choose their room: availability answers one slot per room. */
export const tastingShift = {
  ...dinnerShift,
  id: 'shift_tasting',
  name: 'Tasting',
  start_time: '17:00',
  end_time: '18:00',
  requires_room_selection: true,
};

export function reservationBootstrap(overrides: Record<string, unknown> = {}) {
  const base = demoBootstrap(
    {
      rooms: [
        { id: 'room_main', name: 'Main room' },
        { id: 'room_terrace', name: 'Terrace' },
      ],
      tables: [
        { id: 'tbl_2a', name: '2A', room_id: 'room_main', min_pax: 1, max_pax: 2 },
        { id: 'tbl_2b', name: '2B', room_id: 'room_main', min_pax: 1, max_pax: 2 },
        { id: 'tbl_4', name: '4', room_id: 'room_main', min_pax: 2, max_pax: 4 },
        { id: 'tbl_8', name: '8', room_id: 'room_terrace', min_pax: 4, max_pax: 8 },
      ],
      shifts: [dinnerShift, lunchShift, brunchShift, lateShift, tastingShift],
      prescribers: [{ id: 'pre_1', name: 'Hotel Concierge', phone_number: '+33612345678' }],
      discounts: [
        {
          id: 'disc_1',
          is_active: true,
          value: 20,
          message: '-20% lunch',
          start_date: null,
          end_date: null,
          start_time: '12:00',
          end_time: '14:00',
          days_of_week: [1, 2, 3, 4, 5],
          max_covers_per_day: 20,
        },
        {
          id: 'disc_dinner',
          is_active: true,
          value: 10,
          message: '-10% dinner',
          start_date: null,
          end_date: null,
          start_time: '18:00',
          end_time: '22:00',
          days_of_week: [1, 2, 3, 4, 5, 6, 7],
          max_covers_per_day: 40,
        },
        {
          id: 'disc_inactive',
          is_active: false,
          value: 15,
          message: 'paused',
          start_date: null,
          end_date: null,
          start_time: '00:00',
          end_time: '23:59',
          days_of_week: [1, 2, 3, 4, 5, 6, 7],
          max_covers_per_day: 40,
        },
        {
          id: 'disc_mid_june',
          is_active: true,
          value: 5,
          message: 'mid-June',
          start_date: '2026-06-10T00:00:00+02:00',
          end_date: '2026-06-20T23:59:59+02:00',
          start_time: '00:00',
          end_time: '23:59',
          days_of_week: [1, 2, 3, 4, 5, 6, 7],
          max_covers_per_day: 40,
        },
      ],
      ...overrides,
    },
    [
      { id: 'key_full', token: TOKENS.full, scopes: ALL },
      {
        id: 'key_plain',
        token: TOKENS.noSensitive,
        scopes: ALL.filter((s) => s !== 'RESERVATIONS_READ_SENSITIVE'),
      },
      { id: 'key_read', token: TOKENS.readOnly, scopes: ['RESERVATIONS_READ'] },
      { id: 'key_catalog', token: TOKENS.catalogOnly, scopes: ['CATALOG_READ'] },
      {
        id: 'key_nocancel',
        token: TOKENS.noCancel,
        scopes: ['RESERVATIONS_READ', 'RESERVATIONS_WRITE', 'CUSTOMERS_READ', 'CUSTOMERS_WRITE'],
      },
    ],
  );
  const other = demoBootstrap(
    {
      id: 'rest_other',
      slug: 'other',
      name: 'Other',
      tables: [{ id: 'tbl_o', name: 'O', room_id: null, min_pax: 1, max_pax: 4 }],
      shifts: [dinnerShift],
    },
    [{ id: 'key_other', token: TOKENS.other, scopes: ALL }],
  );
  return { restaurants: [...base.restaurants, ...other.restaurants] };
}

/** The test service and the fixed clock it runs on. */
export type ReservationService = TestService & { clock: FixedClock };

export async function startReservationService(
  options: {
    bootstrap?: unknown;
    env?: Record<string, string>;
    clock?: FixedClock;
    webhooks?: StartOptions['webhooks'];
  } = {},
): Promise<ReservationService> {
  const clock = options.clock ?? new FixedClock(NOW);
  const svc = await startTestService({
    ...(options.webhooks ? { webhooks: options.webhooks } : {}),
    bootstrap: options.bootstrap ?? reservationBootstrap(),
    clock,
    env: { RATE_LIMIT_PER_MINUTE: '1000000', ROLES: 'api,projector', ...options.env },
  });
  return Object.assign(svc, { clock });
}

/** POST /reservations with the full key; `body` overrides a 2-guest dinner. `baseUrl`: another server. */
export const create = (
  svc: TestService,
  body: Record<string, unknown> = {},
  token = TOKENS.full,
  baseUrl?: string,
  /** The body breaks the documented schema on purpose (see RequestOptions.invalid). */
  invalid = false,
) =>
  svc.api('POST', `${baseUrl ? `${baseUrl}/api/partner/v1` : ''}/reservations`, {
    token,
    body: { party_size: 2, start_at: DINNER, ...body },
    invalid,
  });

/**
 * A service on `dataDir` (kept, so a suite can restart on it) whose API keys also hold WEBHOOKS_WRITE,
 * with the webhooks role on the frozen clock at NOW and loopback targets allowed: the erasure suites'.
 */
export function startWebhooksService(dataDir: string): Promise<TestService> {
  const bootstrap = reservationBootstrap();
  for (const r of bootstrap.restaurants)
    for (const k of r.api_keys as { scopes: string[] }[]) k.scopes = [...k.scopes, 'WEBHOOKS_WRITE'];
  return startTestService({
    bootstrap,
    dataDir,
    clock: new FixedClock(NOW),
    env: {
      RATE_LIMIT_PER_MINUTE: '1000000',
      ROLES: 'api,projector,webhooks',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    },
  });
}
