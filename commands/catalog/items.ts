// What a catalog item may look like in a configuration (bootstrap file, `catalog apply`), and its
// normalised form: optional settings get their defaults, lists are sorted, so that equal
// configurations are equal values. Structural checks come from the schema declarations; rules that
// involve several fields are checked after.
import { validate } from 'superstruct';
import type { Issue } from '../../src/core/errors';
import {
  arr,
  bool,
  dateTime,
  email,
  enums,
  type Infer,
  int,
  nullable,
  num,
  obj,
  optional,
  type Schema,
  str,
} from '../../src/http/schema';
import { issuesOf } from '../../src/http/validate';
import { placeholderProblems } from '../missed-calls/template';
import {
  type CatalogKind,
  type CatalogLists,
  CUSTOMER_FIELD_TYPES,
  type CustomerField,
  type Discount,
  type MessageTemplate,
  type Prescriber,
  type Room,
  type Shift,
  type Table,
  TEMPLATE_CHANNELS,
  TEMPLATE_STATUSES,
  TEMPLATE_TYPES,
} from './types';

export const ITEM_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** WhatsApp template names: lowercase letters, digits and underscores. */
export const TEMPLATE_NAME = /^[a-z0-9_]{1,512}$/;
/** WhatsApp language codes: a language, optionally a region (fr, en_US, pt_BR, zh_HK). */
export const TEMPLATE_LANGUAGE = /^[a-z]{2,3}(_[A-Z]{2})?$/;
export const LOCAL_TIME = /^([01]\d|2[0-3]):[0-5]\d$/;

const id = () => str({ pattern: ITEM_ID, description: '1 to 64 letters, digits, _ or -' });
const name = () => str({ min: 1, max: 200 });
const time = () => str({ pattern: LOCAL_TIME, description: 'HH:MM, 00:00 to 23:59' });
const days = () => arr(int({ min: 1, max: 7 }), { min: 1, max: 7, unique: true });

const roomInput = obj({ id: id(), name: name() });
const tableInput = obj({
  id: id(),
  name: optional(str({ min: 1, max: 100 })),
  room_id: optional(nullable(id())),
  min_pax: optional(int({ min: 1, max: 100 })),
  max_pax: int({ min: 1, max: 100 }),
});
const shiftInput = obj({
  id: id(),
  name: name(),
  start_time: time(),
  end_time: time(),
  days_of_week: days(),
  slot_interval_minutes: int({ min: 5, max: 240 }),
  duration_minutes: int({ min: 5, max: 1440 }),
  durations_by_party_size: optional(
    arr(obj({ max_party_size: int({ min: 1, max: 100 }), duration_minutes: int({ min: 5, max: 1440 }) }), {
      max: 100,
    }),
  ),
  max_covers: optional(nullable(int({ min: 1, max: 100_000 }))),
  min_party_size: optional(int({ min: 1, max: 100 })),
  max_party_size: optional(nullable(int({ min: 1, max: 100 }))),
  requires_room_selection: optional(bool()),
  requires_approval: optional(bool()),
  deposit: optional(
    nullable(
      obj({
        amount_per_cover: int({ min: 0 }),
        min_party_size: optional(int({ min: 1, max: 100 })),
        payment_mode: str({ min: 1, max: 64 }),
      }),
    ),
  ),
  booking_window_days: optional(nullable(int({ min: 0, max: 3650 }))),
  minimum_notice_minutes: optional(int({ min: 0, max: 525_600 })),
});
const prescriberInput = obj({
  id: id(),
  name: name(),
  phone_number: optional(nullable(str({ min: 3, max: 40 }))),
  email: optional(nullable(email())),
});
const discountInput = obj({
  id: id(),
  is_active: optional(bool()),
  value: num({ min: 0 }),
  message: str({ min: 1, max: 500 }),
  start_date: optional(nullable(dateTime())),
  end_date: optional(nullable(dateTime())),
  start_time: time(),
  end_time: time(),
  days_of_week: days(),
  max_covers_per_day: int({ min: 0, max: 100_000 }),
});
const customerFieldInput = obj({
  id: id(),
  name: name(),
  type: enums(CUSTOMER_FIELD_TYPES),
  options: optional(nullable(arr(str({ min: 1, max: 200 }), { min: 1, max: 500, unique: true }))),
  min: optional(nullable(num())),
  max: optional(nullable(num())),
  max_items: optional(nullable(int({ min: 1, max: 500 }))),
});
const templateInput = obj({
  id: id(),
  type: enums(TEMPLATE_TYPES),
  channel: enums(TEMPLATE_CHANNELS),
  status: enums(TEMPLATE_STATUSES),
  body: str({ min: 1, max: 4096 }),
  name: optional(str({ pattern: TEMPLATE_NAME, description: 'lowercase letters, digits and _, 1 to 512' })),
  language: optional(
    nullable(str({ pattern: TEMPLATE_LANGUAGE, description: 'a language code such as fr, en_US or pt_BR' })),
  ),
});

type Report = (path: string, message: string, code?: string) => void;

const sortedDays = (d: number[]) => [...d].sort((a, b) => a - b);

function room(r: Infer<typeof roomInput>): Room {
  return { id: r.id, name: r.name };
}

function table(t: Infer<typeof tableInput>, bad: Report): Table {
  const min = t.min_pax ?? 1;
  if (min > t.max_pax) bad('min_pax', 'min_pax must not exceed max_pax');
  return { id: t.id, name: t.name ?? t.id, room_id: t.room_id ?? null, min_pax: min, max_pax: t.max_pax };
}

function shift(s: Infer<typeof shiftInput>, bad: Report): Shift {
  const rules = [...(s.durations_by_party_size ?? [])].sort((a, b) => a.max_party_size - b.max_party_size);
  for (let i = 1; i < rules.length; i++)
    if (rules[i]?.max_party_size === rules[i - 1]?.max_party_size)
      bad('durations_by_party_size', 'each max_party_size may appear once');
  const min = s.min_party_size ?? 1;
  const max = s.max_party_size ?? null;
  if (max !== null && min > max) bad('min_party_size', 'min_party_size must not exceed max_party_size');
  if (s.max_covers != null && s.max_covers < min)
    bad('max_covers', 'max_covers is smaller than the smallest party the shift accepts');
  return {
    id: s.id,
    name: s.name,
    start_time: s.start_time,
    end_time: s.end_time,
    days_of_week: sortedDays(s.days_of_week),
    slot_interval_minutes: s.slot_interval_minutes,
    duration_minutes: s.duration_minutes,
    durations_by_party_size: rules.map((r) => ({
      max_party_size: r.max_party_size,
      duration_minutes: r.duration_minutes,
    })),
    max_covers: s.max_covers ?? null,
    min_party_size: min,
    max_party_size: max,
    requires_room_selection: s.requires_room_selection ?? false,
    requires_approval: s.requires_approval ?? false,
    deposit: s.deposit
      ? {
          amount_per_cover: s.deposit.amount_per_cover,
          min_party_size: s.deposit.min_party_size ?? 1,
          payment_mode: s.deposit.payment_mode,
        }
      : null,
    booking_window_days: s.booking_window_days ?? null,
    minimum_notice_minutes: s.minimum_notice_minutes ?? 0,
  };
}

function prescriber(p: Infer<typeof prescriberInput>): Prescriber {
  return {
    id: p.id,
    name: p.name,
    phone_number: p.phone_number ? p.phone_number.replace(/\s+/g, '') : null,
    email: p.email ?? null,
  };
}

function discount(d: Infer<typeof discountInput>, bad: Report): Discount {
  const start = d.start_date ?? null;
  const end = d.end_date ?? null;
  if (start && end && Date.parse(start) > Date.parse(end))
    bad('end_date', 'end_date must not be before start_date');
  if (d.start_time >= d.end_time) bad('end_time', 'end_time must be after start_time');
  return {
    id: d.id,
    is_active: d.is_active ?? true,
    value: d.value,
    message: d.message,
    start_date: start,
    end_date: end,
    start_time: d.start_time,
    end_time: d.end_time,
    days_of_week: sortedDays(d.days_of_week),
    max_covers_per_day: d.max_covers_per_day,
  };
}

/**
 * Ids a customer field may not take: a field's id is a property name in every customer's
 * `custom_fields` object, and the API refuses bodies holding `__proto__`, `constructor` or
 * `prototype` keys (src/http/body-guard.ts), so such a field could never be set; the other names
 * Object.prototype holds (`toString`, `hasOwnProperty`…) would shadow its machinery on lookups.
 */
export const RESERVED_FIELD_IDS: ReadonlySet<string> = new Set([
  ...Object.getOwnPropertyNames(Object.prototype),
  'prototype',
]);

function customerField(f: Infer<typeof customerFieldInput>, bad: Report): CustomerField {
  if (RESERVED_FIELD_IDS.has(f.id))
    bad('id', `${f.id} is reserved (an Object.prototype name): a custom field needs another id`);
  const listType = f.type === 'SELECT' || f.type === 'MULTI_SELECT';
  const options = f.options ?? null;
  if (listType && !options) bad('options', `a ${f.type} field needs options`, 'required');
  if (!listType && options) bad('options', `options apply to SELECT and MULTI_SELECT fields only`);
  const isNumber = f.type === 'NUMBER';
  const min = f.min ?? null;
  const max = f.max ?? null;
  if (!isNumber && (min !== null || max !== null)) bad('min', 'min and max apply to NUMBER fields only');
  if (min !== null && max !== null && min > max) bad('min', 'min must not exceed max');
  const maxItems = f.max_items ?? null;
  if (maxItems !== null && f.type !== 'MULTI_SELECT')
    bad('max_items', 'max_items applies to MULTI_SELECT fields only');
  if (maxItems !== null && options && maxItems > options.length)
    bad('max_items', 'max_items must not exceed the number of options');
  return {
    id: f.id,
    name: f.name,
    type: f.type,
    options: listType ? options : null,
    min: isNumber ? min : null,
    max: isNumber ? max : null,
    max_items: f.type === 'MULTI_SELECT' ? maxItems : null,
  };
}

function template(t: Infer<typeof templateInput>, bad: Report): MessageTemplate {
  for (const problem of placeholderProblems(t.type, t.body)) bad('body', problem);
  return {
    id: t.id,
    type: t.type,
    channel: t.channel,
    status: t.status,
    body: t.body,
    name: t.name ?? t.id,
    language: t.language ?? null,
  };
}

const KINDS = {
  rooms: [roomInput, room],
  tables: [tableInput, table],
  shifts: [shiftInput, shift],
  prescribers: [prescriberInput, prescriber],
  discounts: [discountInput, discount],
  customer_fields: [customerFieldInput, customerField],
  message_templates: [templateInput, template],
} as const;

/**
 * Validates and normalises one section of a configuration. Issues carry paths such as
 * `tables.3.max_pax`; ids must be distinct within the section.
 */
export function normalizeSection<K extends CatalogKind>(
  kind: K,
  raw: readonly unknown[],
  issues: Issue[],
): CatalogLists[K] {
  const [schema, build] = KINDS[kind] as unknown as [
    Schema<unknown>,
    (item: unknown, bad: Report) => CatalogLists[K][number],
  ];
  const out: CatalogLists[K][number][] = [];
  const seen = new Set<string>();
  raw.forEach((value, i) => {
    const at = `${kind}.${i}`;
    const [error, parsed] = validate(value, schema.struct);
    if (error) {
      for (const issue of issuesOf(error, at))
        issues.push({ ...issue, path: issue.path ? `${at}.${issue.path}` : at });
      return;
    }
    const bad: Report = (path, message, code = 'invalid_value') =>
      issues.push({ path: `${at}.${path}`, code, message });
    const item = build(parsed, bad);
    if (seen.has(item.id)) bad('id', `${item.id} appears twice in ${kind}`, 'duplicate');
    seen.add(item.id);
    out.push(item);
  });
  return out as CatalogLists[K];
}
