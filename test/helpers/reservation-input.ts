// A creation's input for the pure reservation rules' unit tests (decide-create.ts): a party of two
// at dinner the day after the tests' clock, every option at its default unless given.
import type { CreateInput } from '../../commands/reservations/decide-create';

export function createInput(over: Partial<CreateInput> = {}): CreateInput {
  return {
    reservationId: 'res_1',
    restaurantId: 'rest_1',
    externalId: null,
    seating: {
      service_date: '2026-06-03',
      shift_id: 'shift_dinner',
      room_id: 'room_main',
      table_ids: ['tbl_2a'],
      start_at: '2026-06-03T19:00:00+02:00',
      end_at: '2026-06-03T20:30:00+02:00',
      duration_minutes: 90,
      party_size: 2,
    },
    source: 'WEBSITE',
    customerId: null,
    currency: 'EUR',
    requiresApproval: false,
    deposit: null,
    initialStatus: null,
    bypassApproval: false,
    bypassPayments: false,
    forceInserted: false,
    sendClientNotifications: true,
    sendPaymentLink: true,
    totalAmountPaid: 0,
    customMessage: null,
    allergies: null,
    metadata: {},
    tags: [],
    attachedFiles: [],
    discountId: null,
    prescriberId: null,
    isTableDefinitive: false,
    sendFollowupEmail: false,
    ...over,
  };
}
