// Catalog reference data (spec §4 GET /discounts, DESIGN.md §3 catalog routes). Each route answers the
// authenticated restaurant's whole list, in configured order, from the `catalogs` read model.
import type { Catalog } from '../../../commands/catalog/types';
import { discountsActiveFirst, getCatalog } from '../../../queries/catalog';
import type { Scope } from '../../core/scopes';
import { type AnyRoute, defineRoute, scopes } from '../route';
import { described } from '../schema';
import {
  customerFieldSchema,
  discountSchema,
  EXAMPLES,
  listOf,
  messageTemplateSchema,
  prescriberSchema,
  roomSchema,
  shiftSchema,
  tableSchema,
} from './catalog-docs';

interface ListRoute {
  path: string;
  operationId: string;
  summary: string;
  description: string;
  scope: Scope;
  item: Record<string, unknown>;
  example: unknown[];
  list: (c: Catalog) => unknown[];
}

const list = (r: ListRoute): AnyRoute =>
  defineRoute({
    method: 'GET',
    path: r.path,
    operationId: r.operationId,
    summary: r.summary,
    description: r.description,
    tag: 'Catalog',
    access: scopes(r.scope),
    responses: {
      200: { description: r.summary, schema: described(listOf(r.item)), example: { data: r.example } },
    },
    handler: async ({ rt, auth }) => ({
      body: { data: r.list(await getCatalog(rt.docs, auth.restaurant._id)) },
    }),
  });

export const catalogRoutes: AnyRoute[] = [
  list({
    path: '/rooms',
    operationId: 'listRooms',
    summary: 'Rooms of the restaurant',
    description:
      'Rooms group tables. Shifts that require room selection offer one availability slot per room.',
    scope: 'CATALOG_READ',
    item: roomSchema,
    example: EXAMPLES.rooms,
    list: (c) => c.rooms,
  }),
  list({
    path: '/tables',
    operationId: 'listTables',
    summary: 'Tables of the restaurant',
    description:
      'A reservation takes one table whose min_pax ≤ party size ≤ max_pax for its whole seating; its `tables` name them.',
    scope: 'CATALOG_READ',
    item: tableSchema,
    example: EXAMPLES.tables,
    list: (c) => c.tables,
  }),
  list({
    path: '/shifts',
    operationId: 'listShifts',
    summary: 'Services (lunch, dinner…) and their booking rules',
    description:
      'Bookable starts run from start_time to end_time inclusive every slot_interval_minutes on the restaurant wall clock, on the ISO days_of_week of the service day. On the day DST starts, wall times that do not exist are not offered; on the day it ends, a repeated time is offered once (first occurrence). Seating lengths are elapsed minutes.',
    scope: 'CATALOG_READ',
    item: shiftSchema,
    example: EXAMPLES.shifts,
    list: (c) => c.shifts,
  }),
  list({
    path: '/prescribers',
    operationId: 'listPrescribers',
    summary: 'Prescribers (concierges, hotels, agencies that send guests)',
    description: 'Reservations may name a prescriber by id.',
    scope: 'CATALOG_READ',
    item: prescriberSchema,
    example: EXAMPLES.prescribers,
    list: (c) => c.prescribers,
  }),
  list({
    path: '/discounts',
    operationId: 'listDiscounts',
    summary: 'Discounts, active first',
    description:
      'Active discounts first, then inactive ones, each group in configured order. Whether a discount applies now is not evaluated: use is_active, start_date, end_date, start_time, end_time and days_of_week.',
    scope: 'CATALOG_READ',
    item: discountSchema,
    example: EXAMPLES.discounts,
    list: discountsActiveFirst,
  }),
  list({
    path: '/customer-fields',
    operationId: 'listCustomerFields',
    summary: 'Customer custom fields',
    description:
      'The keys and value types accepted in customer.custom_fields (spec §2.4): options for SELECT and MULTI_SELECT, min/max for NUMBER, max_items for MULTI_SELECT; properties that do not apply are null.',
    scope: 'CUSTOMERS_READ',
    item: customerFieldSchema,
    example: EXAMPLES.customer_fields,
    list: (c) => c.customer_fields,
  }),
  list({
    path: '/message-templates',
    operationId: 'listMessageTemplates',
    summary: 'Message templates (missed-call follow-ups)',
    description:
      "Templates sent after a missed call (POST /missed-calls); only APPROVED WhatsApp ones are sent. `name` is the provider's template name (default: the id); `language` its language code (null: from the restaurant's country). Placeholders in `body`: {{guest_name}}, {{restaurant_name}}, {{reservation_date}}, {{reservation_time}}, {{booking_link}}, or {{1}} to {{5}} in that order.",
    scope: 'CATALOG_READ',
    item: messageTemplateSchema,
    example: EXAMPLES.message_templates,
    // Templates configured before name and language existed are shown with their defaults.
    list: (c) =>
      c.message_templates.map((m) => ({ ...m, name: m.name ?? m.id, language: m.language ?? null })),
  }),
];
