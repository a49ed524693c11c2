// The service the fuzzer runs against (the reservation test restaurant: every route has data to
// reach), and the checks made once the fuzzing is over: nothing polluted Object.prototype and the
// service still answers a normal write and read correctly.
import * as assert from 'uvu/assert';
import { allRoutes } from '../../src/http/routes/index';
import { type FuzzOptions, type FuzzReport, generate, runFuzz } from './fuzz';
import { Browser, formFields, signIn } from './oauth';
import { OpenApiChecker, publishedDocument } from './openapi';
import {
  DINNER,
  type ReservationService,
  reservationBootstrap,
  startReservationService,
  TOKENS,
} from './reservations';

/** The manager the fuzzer signs in as (the pages' requests carry their session). */
export const MANAGER = { email: 'fuzz-manager@demo.test', password: 'fuzz manager password 0123' };

export async function startFuzzTarget(): Promise<ReservationService> {
  return startReservationService({
    bootstrap: {
      ...reservationBootstrap(),
      users: [{ ...MANAGER, restaurants: [{ id: 'rest_demo', manage_integrations: true }] }],
    },
  });
}

/** A session signed in as the manager, through the sign-in page as a browser does. */
export async function managerSession(svc: ReservationService): Promise<NonNullable<FuzzOptions['session']>> {
  const b = new Browser(svc.url);
  const first = await b.get('/dashboard?restaurant=rest_demo');
  const accepted = await signIn(b, await b.get(first.location as string), MANAGER.email, MANAGER.password);
  assert.is(accepted.status, 303, 'the fuzzer signs in');
  const page = await b.get('/dashboard/api-keys?restaurant=rest_demo');
  const csrf = formFields(page.text, '/dashboard/api-keys/create').csrf_token;
  assert.ok(csrf, 'the dashboard form carries a CSRF token');
  const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  return { cookie, csrf: csrf as string, restaurant: 'rest_demo' };
}

export async function fuzzService(
  svc: ReservationService,
  count: number,
  seed: number,
  onProgress?: (done: number) => void,
): Promise<FuzzReport> {
  const routes = allRoutes(svc.rt);
  const session = await managerSession(svc);
  const requests = generate(
    { routes, tokens: { full: TOKENS.full, other: TOKENS.other }, session },
    count,
    seed,
  );
  const checker = new OpenApiChecker(await publishedDocument(svc.rt));
  const port = Number(new URL(svc.url).port);
  return runFuzz(port, requests, checker, 4, onProgress);
}

/** Throws unless the service is still whole after the fuzzing. */
export async function assertStillServing(svc: ReservationService): Promise<void> {
  for (const probe of [{}, Object.prototype, Array.prototype] as Record<string, unknown>[])
    assert.is(probe.polluted, undefined, 'a prototype was polluted');
  const created = await svc.api('POST', '/reservations', {
    token: TOKENS.full,
    body: { party_size: 2, start_at: DINNER, customer: { name: 'After Fuzz', email: 'after@fuzz.example' } },
  });
  assert.is(created.status, 201, created.text);
  const id = created.body.data.id as string;
  const read = await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full });
  assert.is(read.status, 200, read.text);
  assert.is(read.body.data.id, id);
  assert.is(read.body.data.customer.name, 'After Fuzz');
  assert.is(read.body.data.party_size, 2);
  const me = await svc.api('GET', '/me', { token: TOKENS.full });
  assert.is(me.status, 200, me.text);
}
