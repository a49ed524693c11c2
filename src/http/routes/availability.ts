// GET /availability and POST /availability/check (spec §2.7, §4; DESIGN.md §3). Both read the
// catalog and the `bookings` read model and run the pure engine in commands/availability.
import * as s from 'superstruct';
import { slotToApi } from '../../../commands/availability/check';
import { FAILURE_REASONS } from '../../../commands/availability/rules';
import { checkAvailability, searchAvailability } from '../../../queries/availability';
import { getCatalog } from '../../../queries/catalog';
import { PARTY_SIZE } from '../../core/limits';
import { type AnyRoute, defineRoute, scopes } from '../route';
import { dateTime, described, int, intQuery, nullable, obj, optional, type Schema, str } from '../schema';

/** Widest GET /availability window: a month of starts answers in a few milliseconds. */
export const MAX_WINDOW_DAYS = 31;

const OFFSET_SPACE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)? \d{2}:\d{2}$/;

/**
 * A query-string date-time. An unencoded `+` arrives as a space ("…T19:00:00 02:00"); say so
 * precisely rather than "invalid date".
 */
function queryDateTime(description: string, example: string): Schema<string> {
  const base = dateTime({ description, example, service: true, query: true });
  return {
    ...base,
    struct: s.refine(s.string(), 'date_time', (v) => {
      if (OFFSET_SPACE.test(v))
        return `has a space where its offset sign should be: a + in a query string must be URL-encoded as %2B (e.g. ${example.replace('+', '%2B')})`;
      const [error] = s.validate(v, base.struct);
      return error ? (error.failures()[0]?.message ?? 'must be a date-time with an offset') : true;
    }) as s.Struct<string, unknown>,
  };
}

const slotSchema = {
  type: 'object',
  required: ['start_at', 'end_at', 'duration_minutes', 'shift_id', 'room_id'],
  additionalProperties: false,
  properties: {
    start_at: {
      type: 'string',
      format: 'date-time',
      description: "Seating start, with the restaurant's UTC offset at that instant",
    },
    end_at: { type: 'string', format: 'date-time', description: 'start_at + duration_minutes' },
    duration_minutes: { type: 'integer', description: 'Seating length for this party size' },
    shift_id: { type: 'string', description: 'Pass it to POST /reservations' },
    room_id: {
      type: 'string',
      nullable: true,
      description:
        'null unless the shift requires room selection; then pass it to POST /reservations. A room_id you filtered on for another shift is not repeated here: pass your own on to keep the seating in that room',
    },
  },
};

const slotExample = {
  start_at: '2026-05-01T19:00:00+02:00',
  end_at: '2026-05-01T20:30:00+02:00',
  duration_minutes: 90,
  shift_id: 'shift_dinner',
  room_id: null,
};

const SEARCH_DESCRIPTION = `Only slots bookable right now are returned (no capacity counts). A slot is bookable when the shift runs that service day and offers that start, the party size is within the shift's limits, the start is at least the shift's minimum notice after now and within its booking window, the shift's max_covers for that day still fits the party, and a table seating the party (in the slot's room when the shift requires room selection) is free for the whole seating [start_at, end_at). Availability reserves nothing: POST /reservations rechecks.

Bounds are inclusive start instants, each with an explicit offset (URL-encode + as %2B); the window spans at most ${MAX_WINDOW_DAYS} days. Slots are ordered by start_at, then shift, then room. When the shift requires room selection the same start_at appears once per room able to seat the party. A shift_id or room_id this restaurant does not have answers 422 (unknown_reference); a start_at_to before start_at_from answers 400 (invalid_range).

Starts run on the restaurant's wall clock from the shift's start_time to end_time inclusive. On the day DST starts, wall times that do not exist are not offered; on the day it ends, a repeated time is offered once, at its first occurrence. A shift whose end_time is earlier than its start_time runs past midnight; its late starts belong to the day it began.`;

const SEARCH_PARTY = `Guests, ${PARTY_SIZE.search.min} to ${PARTY_SIZE.search.max} (no shift seats more; POST /reservations takes up to ${PARTY_SIZE.booking.max} for forced insertions)`;

const searchQuery = obj({
  start_at_from: queryDateTime('Earliest start (inclusive), with an offset', '2026-05-01T18:00:00+02:00'),
  start_at_to: queryDateTime(
    `Latest start (inclusive), with an offset; at most ${MAX_WINDOW_DAYS} days after start_at_from`,
    '2026-05-01T23:00:00+02:00',
  ),
  party_size: intQuery({ ...PARTY_SIZE.search, description: SEARCH_PARTY, example: 2 }),
  room_id: optional(
    str({
      min: 1,
      max: 64,
      description:
        "Only tables of this room. For a shift without room selection the slots' room_id stays null: pass this room_id on to POST /reservations, or the seating may be in any room",
    }),
  ),
  shift_id: optional(str({ min: 1, max: 64, description: 'Only this shift' })),
});

const checkBody = obj({
  start_at: dateTime({
    service: true,
    description: 'The exact start, with an offset',
    example: '2026-05-01T19:00:00+02:00',
  }),
  party_size: int({ ...PARTY_SIZE.search, description: SEARCH_PARTY, example: 2 }),
  shift_id: optional(str({ min: 1, max: 64, description: 'Omitted: any shift offering this start' })),
  // Nullable like POST /reservations' room_id: a slot of GET /availability (or of this answer) carries
  // room_id null when its shift does not require room selection, and is passed on as it is.
  room_id: optional(
    nullable(
      str({
        min: 1,
        max: 64,
        description:
          "Required by a shift that requires room selection (else failure_reason ROOM_SELECTION_REQUIRED); for other shifts, omitted or null (a slot's own room_id): the best table of any room",
      }),
    ),
  ),
});

const FAILURE_TEXT = `A shift_id or room_id this restaurant does not have is a mistake, not an answer: 422 with an \`unknown_reference\` issue on the field, like every route. Codes, the first that applies: RESTAURANT_SUSPENDED (in practice a suspended restaurant's token is refused first with 403); OUTSIDE_SHIFT (no shift offers this exact start that day); PARTY_SIZE_OUT_OF_RANGE (the shift's min/max party size, else the largest table); TOO_LATE (before now + the shift's minimum notice); TOO_FAR (beyond its booking window); ROOM_SELECTION_REQUIRED (the shift requires room selection and no room_id was given: take one from GET /availability's slots); MAX_COVERS_REACHED (the shift's covers that day); NO_TABLE (no fitting table free for the whole seating). When several shifts offer the start and none can seat the party, the most specific reason is reported.`;

export const availabilityRoutes: AnyRoute[] = [
  defineRoute({
    method: 'GET',
    path: '/availability',
    operationId: 'searchAvailability',
    summary: 'Bookable slots in a time window',
    description: SEARCH_DESCRIPTION,
    tag: 'Availability',
    access: scopes('AVAILABILITY_READ'),
    query: searchQuery,
    windows: [['start_at_from', 'start_at_to', { maxDays: MAX_WINDOW_DAYS }]],
    references: { query: { shift_id: 'shift', room_id: 'room' } },
    errors: [422],
    responses: {
      200: {
        description: 'The bookable slots',
        schema: described({
          type: 'object',
          required: ['data'],
          additionalProperties: false,
          properties: {
            data: {
              type: 'object',
              required: ['slots'],
              additionalProperties: false,
              properties: { slots: { type: 'array', items: slotSchema } },
            },
          },
        }),
        example: { data: { slots: [slotExample] } },
      },
    },
    handler: async ({ rt, auth, query }) => {
      // The window's order and span are checked with the query string (`windows`).
      const from = Date.parse(query.start_at_from);
      const to = Date.parse(query.start_at_to);
      const restaurant = auth.restaurant;
      const catalog = await getCatalog(rt.docs, restaurant._id);
      const slots = await searchAvailability(
        rt.docs,
        restaurant,
        {
          from_ms: from,
          to_ms: to,
          party_size: query.party_size,
          shift_id: query.shift_id ?? null,
          room_id: query.room_id ?? null,
        },
        rt.clock.now(),
        catalog,
      );
      return { body: { data: { slots: slots.map((x) => slotToApi(restaurant.timezone, x)) } } };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/availability/check',
    operationId: 'checkAvailability',
    summary: 'Check one exact slot',
    description: `available: false is a normal 200 answer with a failure_reason a partner can act on; when available, slot is the seating POST /reservations would make with the same fields (pass on its shift_id, and the room_id you sent: a shift without room selection answers room_id null, and without yours POST /reservations may seat the party in any room). Nothing is reserved.\n\n${FAILURE_TEXT}`,
    tag: 'Availability',
    access: scopes('AVAILABILITY_READ'),
    body: checkBody,
    bodyExample: { start_at: '2026-05-01T19:00:00+02:00', party_size: 4 },
    bodyRequired: true,
    references: { body: { shift_id: 'shift', room_id: 'room' } },
    errors: [422],
    responses: {
      200: {
        description: 'Whether the slot is bookable now',
        schema: described({
          type: 'object',
          required: ['data'],
          additionalProperties: false,
          properties: {
            data: {
              type: 'object',
              required: ['available', 'failure_reason', 'slot'],
              additionalProperties: false,
              properties: {
                available: { type: 'boolean' },
                failure_reason: {
                  type: 'string',
                  nullable: true,
                  // Only the reasons this answer can carry: an unknown shift_id or room_id is a 422
                  // first, and the body takes no table_ids (UNKNOWN_* are POST /reservations' reasons).
                  enum: FAILURE_REASONS.filter((r) => !r.startsWith('UNKNOWN_')),
                },
                slot: { ...slotSchema, nullable: true },
              },
            },
          },
        }),
        example: { data: { available: false, failure_reason: 'NO_TABLE', slot: null } },
      },
    },
    handler: async ({ rt, auth, body }) => {
      const restaurant = auth.restaurant;
      const result = await checkAvailability(
        rt.docs,
        restaurant,
        {
          start_ms: Date.parse(body.start_at),
          party_size: body.party_size,
          shift_id: body.shift_id ?? null,
          room_id: body.room_id ?? null,
        },
        rt.clock.now(),
      );
      return {
        body: {
          data: result.available
            ? { available: true, failure_reason: null, slot: slotToApi(restaurant.timezone, result.slot) }
            : { available: false, failure_reason: result.failure_reason, slot: null },
        },
      };
    },
  }),
];
