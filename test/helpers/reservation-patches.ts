// What the e2e tests of a PATCH's consequences (the deposit it carries, what a move requires) share:
// a reservation service with its OpenAPI checker, and a partner's key without privileged scopes.
import { suite } from 'uvu';
import { OpenApiChecker } from './openapi';
import { type ReservationService, startReservationService, TOKENS } from './reservations';

export const PATCH_PATH = '/api/partner/v1/reservations/{id}';

/** A partner's key with no privileged scope (RESERVATIONS_READ/WRITE, customers). */
export const PLAIN = TOKENS.noCancel;

/** A Paris time in June 2026. */
export const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;

export const patch = (svc: ReservationService, id: string, body: unknown, token = PLAIN) =>
  svc.api('PATCH', `/reservations/${id}`, { token, body });

/** The reservation as a key holding every scope reads it. */
export const read = async (svc: ReservationService, id: string) =>
  (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;

/** A suite on its own reservation service, closed after it. */
export function patchSuite(name: string) {
  const t = suite<{ svc: ReservationService; openapi: OpenApiChecker }>(name);
  t.before(async (ctx) => {
    ctx.svc = await startReservationService();
    ctx.openapi = new OpenApiChecker((await ctx.svc.api('GET', '/openapi.json')).body);
  });
  t.after(async ({ svc }) => svc.close());
  return t;
}
