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
