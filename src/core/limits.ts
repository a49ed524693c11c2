// Numeric limits of the partner API that more than one route takes, declared once: the routes'
// schemas (validation and the OpenAPI document) are built from these.

/**
 * Guests in one party. Searching (GET /availability, POST /availability/check) stops at the size a
 * shift can seat at all (catalog party sizes are at most 100); booking (POST and PATCH
 * /reservations) allows larger forced insertions (privatisations, events).
 */
export const PARTY_SIZE = {
  search: { min: 1, max: 100 },
  booking: { min: 1, max: 1000 },
} as const;

/**
 * Highest page number of GET /reservations: 100 000 pages of 100 cover ten million reservations,
 * and a bound keeps a page number from growing past what an offset can honestly mean.
 */
export const MAX_PAGE = 100_000;

/**
 * Starts the availability engine books and searches (GET /availability, POST /availability/check,
 * POST and PATCH /reservations): years 0001 to 9998 in UTC. Its calendar steps a day or two around a
 * start in the restaurant's zone and writes dates as YYYY-MM-DD, which only years 0000 to 9999 have:
 * past them a date no longer advances and a search of 9999-12-31 never ended. List filters
 * (start_at_to=9999-12-31T23:59:59Z as "no upper bound") keep every year RFC 3339 has.
 */
export const SERVICE_INSTANTS = {
  fromMs: Date.parse('0001-01-01T00:00:00Z'),
  /** Exclusive. */
  toMs: Date.parse('9999-01-01T00:00:00Z'),
  description: 'years 0001 to 9998 (UTC)',
} as const;
