// Examples of the customer routes' answers in openapi.json, consistent with the catalog examples
// (custom fields cf_vip and cf_visits of GET /customer-fields). A test validates each against its schema.

export const customerExample = {
  id: 'cus_h3k9q2m7x4w8z1p5',
  external_id: 'crm-8812',
  name: 'Camille Martin',
  email: 'camille.martin@example.com',
  phone_number: '+33612345678',
  country_code: 'FR',
  lang: 'FR',
  tags: ['regular', 'wine-lover'],
  note: 'Prefers a quiet table',
  custom_fields: {
    cf_vip: { name: 'VIP level', value: 'gold' },
    cf_visits: { name: 'Visits', value: 12 },
  },
  newsletter_consent: true,
  marketing_opt_outs: ['WHATSAPP'],
  blacklisted: false,
  stats: {
    reservation_count: 14,
    confirmed_count: 13,
    no_show_count: 1,
    feedback_count: 5,
    average_feedback_score: 4.6,
    total_amount_paid: 152000,
    average_basket: 4750,
    last_reservation_date: '2026-05-22',
  },
  created_at: '2025-03-14T18:22:05.000Z',
  updated_at: '2026-05-22T21:40:12.000Z',
};

const newCustomer = {
  ...customerExample,
  id: 'cus_t6v2b8n4c1d9f3g7',
  external_id: 'crm-9120',
  name: 'Léa Dubois',
  email: 'lea.dubois@example.com',
  phone_number: '+33698765432',
  tags: [],
  note: null,
  custom_fields: {},
  newsletter_consent: false,
  marketing_opt_outs: [],
  stats: {
    reservation_count: 0,
    confirmed_count: 0,
    no_show_count: 0,
    feedback_count: 0,
    average_feedback_score: null,
    total_amount_paid: 0,
    average_basket: 0,
    last_reservation_date: null,
  },
  created_at: '2026-06-02T10:00:00.000Z',
  updated_at: '2026-06-02T10:00:00.000Z',
};

export const customerExamples = {
  one: { data: customerExample },
  page: {
    data: [customerExample],
    pagination: {
      next_cursor:
        'eyJ2IjoxLCJyIjoicmVzdF9kZW1vIiwiYSI6MSwiZiI6e319.vh1O3eiCu63ixDYHoj4t1wN2dX_EriXZ2jsbq9AfFMw',
      has_more: true,
    },
  },
  matched: { data: customerExample, result: 'matched' },
  created: { data: newCustomer, result: 'created' },
};

/** Request bodies that succeed, shown beside the body schemas (and validated against them). */
export const customerRequestExamples = {
  create: {
    name: 'Léa Dubois',
    email: 'lea.dubois@example.com',
    phone_number: '+33698765432',
    external_id: 'crm-9120',
    lang: 'FR',
    newsletter_consent: false,
    on_match: 'return_existing',
  },
  /** Only the named fields change; null clears one, custom fields included. */
  update: {
    tags: ['regular', 'wine-lover'],
    note: 'Prefers a quiet table',
    custom_fields: { cf_vip: 'gold', cf_visits: null },
  },
};
