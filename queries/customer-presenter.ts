// The partner representation of a customer (spec §2.1): every field always present, null or empty
// when unset, and nothing of the read model's own bookkeeping.

import type { CustomerDoc } from '../projections/customer-docs';
import { STORED_EMAIL_DESCRIPTION } from '../src/core/email';
import { distinctInOrder } from '../src/core/text';

export function presentCustomer(doc: CustomerDoc) {
  return {
    id: doc._id,
    external_id: doc.external_id ?? null,
    name: doc.name,
    email: doc.email ?? null,
    phone_number: doc.phone_number ?? null,
    country_code: doc.country_code ?? null,
    lang: doc.lang,
    // A customer stored before tags dropped repeats may hold some (commands/customers/prepare.ts).
    tags: distinctInOrder(doc.tags ?? []),
    note: doc.note ?? null,
    custom_fields: doc.custom_fields ?? {},
    newsletter_consent: doc.newsletter_consent ?? false,
    marketing_opt_outs: doc.marketing_opt_outs ?? [],
    blacklisted: doc.blacklisted ?? false,
    stats: doc.stats,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
  };
}

export type CustomerDetail = ReturnType<typeof presentCustomer>;

/** The customer detail as documented in openapi.json. */
export const customerDetailSchema = {
  type: 'object',
  required: [
    'id',
    'external_id',
    'name',
    'email',
    'phone_number',
    'country_code',
    'lang',
    'tags',
    'note',
    'custom_fields',
    'newsletter_consent',
    'marketing_opt_outs',
    'blacklisted',
    'stats',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string' },
    external_id: {
      type: 'string',
      nullable: true,
      description: 'Partner-side identifier; matched first on creation',
    },
    name: { type: 'string' },
    email: { type: 'string', nullable: true, description: STORED_EMAIL_DESCRIPTION },
    phone_number: {
      type: 'string',
      nullable: true,
      description:
        'E.164 when the number could be read (national spellings read with the restaurant country); otherwise as given without spaces',
    },
    country_code: {
      type: 'string',
      nullable: true,
      description: "The phone number's country (ISO 3166-1 alpha-2)",
    },
    lang: { type: 'string', enum: ['FR', 'EN', 'IT', 'ES', 'DE', 'PT'] },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string', nullable: true, description: 'Internal staff note' },
    custom_fields: {
      type: 'object',
      description: 'Keyed by custom field id',
      additionalProperties: {
        type: 'object',
        required: ['name', 'value'],
        properties: {
          name: { type: 'string' },
          value: {
            nullable: true,
            oneOf: [
              { type: 'string' },
              { type: 'number' },
              { type: 'boolean' },
              { type: 'array', items: { type: 'string' } },
            ],
          },
        },
      },
    },
    newsletter_consent: { type: 'boolean' },
    marketing_opt_outs: {
      type: 'array',
      items: { type: 'string', enum: ['EMAIL', 'WHATSAPP'] },
      description: 'Channels where marketing must not be sent (unsubscribed, bounced, blocked)',
    },
    blacklisted: { type: 'boolean', description: 'New reservations for this customer are rejected' },
    stats: {
      type: 'object',
      description: 'Read-only; changes to stats do not change updated_at',
      required: [
        'reservation_count',
        'confirmed_count',
        'no_show_count',
        'feedback_count',
        'average_feedback_score',
        'total_amount_paid',
        'average_basket',
        'last_reservation_date',
      ],
      properties: {
        reservation_count: {
          type: 'integer',
          description: 'Neither canceled nor rejected; upcoming and no-shows included',
        },
        confirmed_count: { type: 'integer', description: 'reservation_count minus no-shows' },
        no_show_count: { type: 'integer' },
        feedback_count: { type: 'integer' },
        average_feedback_score: { type: 'number', nullable: true },
        total_amount_paid: {
          type: 'integer',
          description: 'Smallest currency unit, over the counted reservations',
        },
        average_basket: {
          type: 'number',
          description: 'total_amount_paid per cover of the counted reservations',
        },
        last_reservation_date: {
          type: 'string',
          format: 'date',
          nullable: true,
          description:
            "The restaurant's calendar date of the latest counted reservation's start_at (a 00:30 start is that night's date, not the service day the shift began on); may be in the future",
        },
      },
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};
