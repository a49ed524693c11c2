// The write fuzzer behind test/e2e/fuzz-writes.e2e.test.ts. The request fuzzer (fuzz.ts) breaks
// requests and so rarely gets a write through; this one starts from VALID bodies per write route and
// changes one thing at a time (write-fuzz-values.ts), so most writes succeed, and then reads as a
// partner would: the resource read back equals the write's answer, the list, lookups and sync feeds
// show it the same, a linked record agrees, a refused PATCH changed nothing, and no answer is a 5xx.
// Every answer is held to the OpenAPI document by the test service's client (service.ts).
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { blankAsNull, distinctInOrder } from '../../src/core/text';
import type { AnyRoute } from '../../src/http/route';
import type { JsonSchema } from '../../src/http/schema';
import type { ReservationService } from './reservations';
import type { TestResponse } from './service';
import { type Mutated, mutations, type Sent } from './write-fuzz-values';

export const CUSTOMER_FIELDS = [
  { id: 'cf_birthday', name: 'Birthday', type: 'DATE' },
  { id: 'cf_allergy', name: 'Allergy', type: 'TEXT' },
  { id: 'cf_visits', name: 'Visits', type: 'NUMBER', min: 0, max: 1000 },
  { id: 'cf_vip', name: 'VIP', type: 'BOOLEAN' },
  { id: 'cf_seat', name: 'Seat', type: 'SELECT', options: ['window', 'bar', 'terrace'] },
  { id: 'cf_diet', name: 'Diet', type: 'MULTI_SELECT', options: ['vegan', 'halal', 'kosher'], max_items: 2 },
];

type Op =
  | 'createReservation'
  | 'patchReservation'
  | 'cancelReservation'
  | 'createCustomer'
  | 'patchCustomer'
  | 'reportMissedCall'
  | 'createEndpoint'
  | 'patchEndpoint';

interface Step {
  op: Op;
  /** Which of the known resources a PATCH or cancel targets (modulo their count). */
  pick: number;
  /** Which base body (modulo the bases of the op). */
  base: number;
  /** A mutation seed: the mutation is drawn from the base once it is built (it needs the run's ids). */
  seed: number;
}

export interface WriteFuzzReport {
  steps: number;
  /** Writes answered 2xx, per operation. */
  succeeded: Record<string, number>;
  refused: Record<string, number>;
  failures: string[];
  /** Events delivered to the every-type endpoint. */
  events?: number;
}

export interface Ctx {
  svc: ReservationService;
  token: string;
  routes: Map<string, AnyRoute>;
  n: number;
  reservations: string[];
  customers: string[];
  /** Customers this run has seen, so an inline customer is known to be new. */
  seenCustomers: Set<string>;
  calls: string[];
  /** Phone numbers of this run's customers: missed calls from them find someone. */
  phones: string[];
  /** The latest detail read of each customer: bodies that match them (other spellings, other case). */
  details: Map<string, Json>;
  lastReservations: Map<string, Json>;
  endpoints: string[];
  receiverUrl: string;
  report: WriteFuzzReport;
}

// biome-ignore lint/suspicious/noExplicitAny: arbitrary JSON
type Json = any;

const PARIS_SUMMER_END = Date.parse('2026-10-25T01:00:00Z');
const PARIS_SUMMER_2027 = Date.parse('2027-03-28T01:00:00Z');

/** A bookable dinner (or late) slot `day` days after 3 June 2026, with Paris's offset that day. */
function slot(day: number, at: number): string {
  // Every fifth slot falls around a change of Paris's offset (25 October 2026, 28 March 2027).
  const around = ['2026-10-24', '2026-10-25', '2026-10-26', '2027-03-27', '2027-03-28'];
  const date =
    day % 5 === 0
      ? new Date(`${around[(day / 5) % around.length]}T00:00:00Z`)
      : new Date(Date.UTC(2026, 5, 3 + (day % 240)));
  const ymd = date.toISOString().slice(0, 10);
  const times = ['19:00', '19:15', '19:30', '19:45', '20:00', '20:15', '20:30', '23:00', '23:30', '00:00'];
  const hm = times[at % times.length] as string;
  // 00:00 is the late shift's last slot: the next calendar day.
  const on =
    hm === '00:00' ? new Date(Date.parse(`${ymd}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10) : ymd;
  const instant = Date.parse(`${on}T${hm}:00+01:00`);
  const summer = instant < PARIS_SUMMER_END || instant >= PARIS_SUMMER_2027;
  return `${on}T${hm}:00${summer ? '+02:00' : '+01:00'}`;
}

/** A known customer (by the step number), or undefined before there is one. */
const known = (c: Ctx): Json => [...c.details.values()][c.n % Math.max(1, c.details.size)];

/** An E.164 French number as people type it nationally: +33612345678 → 06 12 34 56 78. */
const national = (e164: string) =>
  /^\+33\d{9}$/.test(e164) ? `0${e164.slice(3)}`.replace(/(\d\d)(?=\d)/g, '$1 ') : e164;

const phoneOf = (n: number) => `+3361${String(n).padStart(7, '0')}`;

function reservationBases(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  const start = slot(n * 7, n);
  const dinner = !/T23/.test(start);
  return [
    {
      party_size: 2,
      start_at: start,
      external_id: `wf-res-${n}`,
      source: 'PHONE',
      custom_message: 'Window seat, please',
      allergies: 'Peanuts',
      metadata: { crm_id: `crm-${n}`, vip: true, visits: 3, notes: ['a', 'b'] },
      tags: ['anniversary', 'regular'],
      attached_files: ['https://files.example/menu.pdf'],
      is_table_definitive: false,
      send_followup_email: true,
      ...(dinner ? { discount_id: 'disc_dinner' } : {}),
      prescriber_id: 'pre_1',
      send_client_notifications: false,
      customer: {
        name: 'Léa Martin',
        email: `lea.${n}@example.com`,
        phone_number: phoneOf(n),
        lang: 'FR',
        tags: ['regular'],
        note: 'Likes the terrace',
        newsletter_consent: true,
        custom_fields: { cf_allergy: 'nuts', cf_visits: 3 },
      },
    },
    { party_size: 2, start_at: start, customer: null },
    ...matchingInline(c, start),
    ...otherShifts(c),
    ...(c.customers.length
      ? [{ party_size: 3, start_at: start, customer: { id: c.customers[n % c.customers.length] } }]
      : []),
  ];
}

/** The shifts with rules of their own: approval and a deposit (lunch), a charge (brunch), a room (tasting). */
function otherShifts(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  const day = slot(n * 13 + 1, 0).slice(0, 10);
  const offset = slot(n * 13 + 1, 0).slice(19);
  const guest = { name: 'Deposit Guest', email: `dep.${n}@example.com` };
  return [
    { party_size: 6, start_at: `${day}T12:30:00${offset}`, customer: guest, total_amount_paid: 1200 },
    { party_size: 2, start_at: `${day}T12:00:00${offset}`, customer: guest, discount_id: 'disc_1' },
    { party_size: 3, start_at: `${day}T10:00:00${offset}`, customer: guest, send_payment_link: false },
    { party_size: 2, start_at: `${day}T17:00:00${offset}`, room_id: 'room_terrace', customer: guest },
    { party_size: 8, start_at: `${day}T19:30:00${offset}`, table_ids: ['tbl_8'], customer: null },
    {
      party_size: 2,
      start_at: `${day}T20:00:00${offset}`,
      bypass_availability: true,
      initial_status: 'PENDING',
      customer: null,
    },
  ];
}

/** Inline customers that match a known one: by its phone in national spelling, or its email in capitals. */
function matchingInline(c: Ctx, start: string): Record<string, unknown>[] {
  const k = known(c);
  if (!k) return [];
  const out: Record<string, unknown>[] = [];
  for (const on_match of ['update', 'return_existing', 'create_new']) {
    if (k.phone_number)
      out.push({
        party_size: 4,
        start_at: start,
        customer: { name: 'Guest By Phone', phone_number: national(k.phone_number), lang: 'IT', on_match },
      });
    if (k.email)
      out.push({
        party_size: 2,
        start_at: start,
        customer: {
          name: 'Guest By Email',
          email: k.email.toUpperCase(),
          note: 'from the form',
          tags: ['web'],
          on_match,
        },
      });
  }
  return out;
}

function reservationPatchBases(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  return [
    {
      custom_message: 'Birthday cake at dessert',
      allergies: 'Gluten',
      metadata: { crm_id: `crm-p-${n}`, table_pref: 'quiet' },
      tags: ['birthday'],
      attached_files: ['https://files.example/cake.jpg'],
      send_followup_email: false,
      total_amount_paid: 4500,
      external_id: `wf-res-p-${n}`,
    },
    { party_size: 2, start_at: slot(n * 11 + 3, n + 2) },
    {
      customer: {
        name: 'Léa Martin-Dupont',
        email: `lea.p.${n}@example.com`,
        phone_number: phoneOf(50_000 + n),
        lang: 'EN',
      },
    },
    ...(c.customers.length ? [{ customer: { id: c.customers[n % c.customers.length] } }] : []),
    { customer: null, source: 'WALK_IN' },
    { customer: { note: 'Asked for high chair', tags: ['family'], email: `fam.${n}@example.com` } },
    { party_size: 6, table_ids: ['tbl_8'], room_id: 'room_terrace' },
    { table_ids: ['tbl_2a', 'tbl_2b'], party_size: 4 },
    {
      discount_id: null,
      prescriber_id: null,
      metadata: {},
      tags: [],
      attached_files: [],
      custom_message: null,
    },
  ];
}

function customerBases(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  const full = {
    name: 'Jean Dupont',
    email: `jean.${n}@example.com`,
    phone_number: phoneOf(100_000 + n),
    external_id: `wf-cus-${n}`,
    lang: 'FR',
    tags: ['vip', 'wine'],
    note: 'Prefers the corner table',
    custom_fields: {
      cf_birthday: '1990-05-01',
      cf_allergy: 'shellfish',
      cf_visits: 12,
      cf_vip: true,
      cf_seat: 'window',
      cf_diet: ['vegan'],
    },
    newsletter_consent: true,
  };
  const k = known(c);
  const matching = k
    ? [
        {
          name: 'Same Person',
          email: k.email ? k.email.toUpperCase() : `same.${n}@example.com`,
          on_match: 'update',
          tags: ['matched'],
        },
        {
          name: 'Same Phone',
          phone_number: k.phone_number ? national(k.phone_number) : phoneOf(600_000 + n),
          on_match: 'update',
          lang: 'DE',
        },
        {
          name: 'Same Id',
          external_id: k.external_id ?? `wf-x-${n}`,
          on_match: 'update',
          note: 'updated by id',
          newsletter_consent: !k.newsletter_consent,
        },
        { name: 'Same Id Again', external_id: k.external_id ?? `wf-x-${n}`, on_match: 'return_existing' },
        { name: 'Twin', email: k.email ?? `twin.${n}@example.com`, on_match: 'create_new' },
      ]
    : [];
  return [
    full,
    { ...full, on_match: 'update' },
    { name: 'Walk In', email: `walk.${n}@example.com` },
    ...matching,
  ];
}

function customerPatchBases(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  return [
    {
      name: 'Jeanne Dupont',
      email: `jeanne.${n}@example.com`,
      phone_number: phoneOf(200_000 + n),
      external_id: `wf-cus-p-${n}`,
      lang: 'EN',
      tags: ['returning'],
      note: 'Called about parking',
      custom_fields: {
        cf_visits: 13,
        cf_seat: 'bar',
        cf_diet: ['halal', 'kosher'],
        cf_birthday: '1985-12-31',
      },
      newsletter_consent: false,
    },
    { note: null, email: null, phone_number: null, external_id: null, custom_fields: { cf_visits: null } },
    ...(known(c)?.external_id ? [{ external_id: known(c).external_id, name: 'Taking An Id' }] : []),
    ...(known(c)?.phone_number ? [{ phone_number: national(known(c).phone_number) }] : []),
    { custom_fields: { cf_diet: [], cf_seat: null, cf_vip: false, cf_allergy: '' } },
  ];
}

function missedCallBases(c: Ctx): Record<string, unknown>[] {
  const n = c.n;
  const now = c.svc.clock.now().getTime();
  const occurred = new Date(now - 60_000).toISOString();
  return [
    { caller_phone_number: phoneOf(300_000 + n), external_call_id: `call-${n}`, occurred_at: occurred },
    ...(c.phones.length
      ? [{ caller_phone_number: c.phones[n % c.phones.length] as string, external_call_id: `call-k-${n}` }]
      : []),
    {
      caller_phone_number: `06 1${String(400_000 + n)
        .padStart(7, '0')
        .replace(/(\d\d)(?=\d)/g, '$1 ')}`,
    },
  ];
}

function endpointBases(c: Ctx): Record<string, unknown>[] {
  return [
    {
      url: `${c.receiverUrl}/wf/${c.n}`,
      description: 'Fuzz endpoint',
      enabled_events: ['reservation.created', 'customer.updated'],
      headers: { 'X-Partner-Id': 'p-1' },
      // Deliveries to every fuzzed endpoint would slow the run tenfold; one mutation enables it.
      disabled: true,
    },
    { url: `${c.receiverUrl}/wf/min-${c.n}`, disabled: true },
  ];
}

function endpointPatchBases(c: Ctx): Record<string, unknown>[] {
  return [
    { description: 'Renamed', enabled_events: ['*'], headers: { 'X-Other': 'v' }, disabled: true },
    { url: `${c.receiverUrl}/wf/moved-${c.n}`, description: null, disabled: true },
  ];
}

const STEP: fc.Arbitrary<Step> = fc.record({
  op: fc.constantFrom<Op>(
    'createReservation',
    'createReservation',
    'patchReservation',
    'patchReservation',
    'cancelReservation',
    'createCustomer',
    'createCustomer',
    'patchCustomer',
    'patchCustomer',
    'reportMissedCall',
    'createEndpoint',
    'patchEndpoint',
  ),
  pick: fc.nat(),
  base: fc.nat(),
  seed: fc.integer(),
});

/** The steps of a run: seeded, so a failure is replayed by its seed. */
export const stepsFor = (count: number, seed: number): Step[] => fc.sample(STEP, { seed, numRuns: count });

function drawMutation(base: Record<string, unknown>, json: JsonSchema, seed: number): Mutated {
  return fc.sample(mutations(base, json), { seed, numRuns: 1 })[0] as Mutated;
}

const short = (v: unknown) => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

export async function runWriteFuzz(
  svc: ReservationService,
  options: {
    token: string;
    routes: AnyRoute[];
    receiverUrl: string;
    steps: Step[];
    /** Once the writes are done: every event delivered to an endpoint of every type. */
    delivered?: () => Promise<Json[]>;
    /** Endpoints to read (deliveries included) but never change. */
    watched?: string[];
    /** A dashboard page as the signed-in manager: its status and text. */
    page?: (path: string) => Promise<{ status: number; text: string }>;
  },
): Promise<WriteFuzzReport> {
  const report: WriteFuzzReport = { steps: 0, succeeded: {}, refused: {}, failures: [] };
  const c: Ctx = {
    svc,
    token: options.token,
    routes: new Map(options.routes.map((r) => [`${r.method} ${r.path}`, r])),
    n: 0,
    reservations: [],
    customers: [],
    seenCustomers: new Set(),
    calls: [],
    phones: [],
    details: new Map(),
    lastReservations: new Map(),
    endpoints: [],
    receiverUrl: options.receiverUrl,
    report,
  };
  for (const step of options.steps) {
    c.n++;
    report.steps++;
    // Each write a second later than the one before: updated_since then tells them apart.
    svc.clock.advance(1);
    try {
      await runStep(c, step);
    } catch (err) {
      report.failures.push(`step ${c.n} ${step.op}: ${(err as Error).message}`);
    }
    if (report.failures.length >= 40) break;
  }
  try {
    await checkWholeFeeds(c);
  } catch (err) {
    report.failures.push(`final sweep: ${(err as Error).message}`);
  }
  try {
    report.failures.push(...(await readEverything(c, options.watched ?? [], options.page)));
  } catch (err) {
    report.failures.push(`read sweep: ${(err as Error).message}`);
  }
  if (options.delivered) {
    const events = await options.delivered();
    report.events = events.length;
    report.failures.push(...(await checkEventsAgree(c, events)));
  }
  return report;
}

async function send(c: Ctx, method: string, path: string, sent: Sent): Promise<TestResponse> {
  return sent.raw !== undefined
    ? c.svc.api(method, path, {
        token: c.token,
        rawBody: sent.raw,
        headers: { 'content-type': 'application/json' },
      })
    : c.svc.api(method, path, { token: c.token, body: sent.value, anyBody: true });
}

async function get(c: Ctx, path: string): Promise<Json> {
  const res = await c.svc.api('GET', path, { token: c.token });
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return res.body;
}

function routeJson(c: Ctx, method: string, path: string): JsonSchema {
  const r = c.routes.get(`${method} ${path}`);
  if (!r?.body) throw new Error(`no body schema for ${method} ${path}`);
  return r.body.json;
}

const pickOf = <T>(list: T[], i: number): T | undefined => (list.length ? list[i % list.length] : undefined);

async function runStep(c: Ctx, step: Step): Promise<void> {
  const write = async (
    method: string,
    template: string,
    path: string,
    bases: Record<string, unknown>[],
    before: ((m: Mutated) => Promise<Json>) | null,
    after: (res: TestResponse, m: Mutated) => Promise<void>,
  ) => {
    const base = pickOf(bases, step.base) as Record<string, unknown>;
    const drawn = drawMutation(base, routeJson(c, method, template), step.seed);
    // As the server reads it (a removed array item is a hole, sent as null).
    const m: Mutated =
      drawn.sent.raw === undefined
        ? { ...drawn, sent: { value: JSON.parse(JSON.stringify(drawn.sent.value)) } }
        : drawn;
    const label = `${method} ${path} with ${m.label}`;
    const prior = before ? await before(m) : null;
    const res = await send(c, method, path, m.sent);
    if (res.status >= 500) throw new Error(`${label}: answered ${res.status}: ${res.text.slice(0, 300)}`);
    if (res.status < 300) {
      c.report.succeeded[step.op] = (c.report.succeeded[step.op] ?? 0) + 1;
      if (process.env.WRITE_FUZZ_VERBOSE === '2') console.log(`${res.status} ${label}`.slice(0, 300));
      try {
        await after(res, m);
      } catch (err) {
        throw new Error(
          `${label}: ${(err as Error).message}\n    body: ${short(m.sent.value ?? m.sent.raw)}`,
        );
      }
    } else {
      c.report.refused[step.op] = (c.report.refused[step.op] ?? 0) + 1;
      if (process.env.WRITE_FUZZ_VERBOSE)
        console.log(
          `${res.status} ${label}: ${res.body?.error?.message ?? ''} ${short(res.body?.error?.details ?? '')}`.slice(
            0,
            400,
          ),
        );
      if (before) {
        const now = await before(m);
        if (!isDeepStrictEqual(now, prior))
          throw new Error(
            `${label}: refused ${res.status} but changed the resource\n    before: ${short(prior)}\n    after:  ${short(now)}`,
          );
      }
    }
  };
  switch (step.op) {
    case 'createReservation':
      return write(
        'POST',
        '/reservations',
        '/reservations',
        reservationBases(c),
        (m) => witnesses(c, m, null),
        async (res, m) => {
          const r = res.body.data;
          c.reservations.push(r.id);
          await checkReservationEcho(c, r, m.sent.value as Json, 'create');
          await checkReservation(c, r);
        },
      );
    case 'patchReservation': {
      const id = pickOf(c.reservations, step.pick);
      if (!id) return;
      return write(
        'PATCH',
        '/reservations/{id}',
        `/reservations/${id}`,
        reservationPatchBases(c),
        async (m) => {
          const r = (await get(c, `/reservations/${id}`)).data;
          return { r, around: await witnesses(c, m, r.customer?.id ?? null) };
        },
        async (res, m) => {
          await checkReservationEcho(c, res.body.data, m.sent.value as Json, 'patch');
          await checkReservation(c, res.body.data);
        },
      );
    }
    case 'cancelReservation': {
      const id = pickOf(c.reservations, step.pick);
      if (!id) return;
      const bases = [{ reason: 'Guest called to cancel' }, {}];
      return write(
        'POST',
        '/reservations/{id}/cancel',
        `/reservations/${id}/cancel`,
        bases,
        async () => (await get(c, `/reservations/${id}`)).data,
        async (res) => {
          if (res.body.data.status !== 'CANCELED_BY_RESTAURANT' && !/CANCELED/.test(res.body.data.status))
            throw new Error(`canceled, answered status ${res.body.data.status}`);
          await checkReservation(c, res.body.data);
        },
      );
    }
    case 'createCustomer':
      return write(
        'POST',
        '/customers',
        '/customers',
        customerBases(c),
        (m) => witnesses(c, m, null),
        async (res, m) => {
          const d = res.body.data;
          if (!c.customers.includes(d.id)) c.customers.push(d.id);
          c.seenCustomers.add(d.id);
          if (res.body.result !== 'matched') checkCustomerEcho(d, m.sent.value as Json);
          await checkCustomer(c, d);
        },
      );
    case 'patchCustomer': {
      const id = pickOf(c.customers, step.pick);
      if (!id) return;
      return write(
        'PATCH',
        '/customers/{id}',
        `/customers/${id}`,
        customerPatchBases(c),
        async () => (await get(c, `/customers/${id}`)).data,
        async (res, m) => {
          checkCustomerEcho(res.body.data, m.sent.value as Json);
          await checkCustomer(c, res.body.data);
        },
      );
    }
    case 'reportMissedCall':
      return write('POST', '/missed-calls', '/missed-calls', missedCallBases(c), null, async (res) => {
        const d = res.body.data;
        c.calls.push(d.id);
        const { outcome: _, ...stored } = d;
        const read = (await get(c, `/missed-calls/${d.id}`)).data;
        const { outcome: __, ...readStored } = read;
        same(readStored, stored, 'GET /missed-calls/{id}');
        const list = await get(
          c,
          `/missed-calls?occurred_at_from=${encodeURIComponent(d.occurred_at)}&limit=100`,
        );
        const listed = list.data.find((x: Json) => x.id === d.id);
        if (!listed) throw new Error(`missed call ${d.id} not listed from its occurred_at`);
        same(listed, read, 'the missed-call list');
        if (d.customer_id) {
          if (d.outcome === 'SENT') await nextReservationAgrees(c, d);
          const cus = (await get(c, `/customers/${d.customer_id}`)).data;
          if (!c.customers.includes(cus.id)) c.customers.push(cus.id);
          c.seenCustomers.add(cus.id);
          await checkCustomer(c, cus);
        }
      });
    case 'createEndpoint':
      return write(
        'POST',
        '/webhook-endpoints',
        '/webhook-endpoints',
        endpointBases(c),
        null,
        async (res, m) => {
          const { secret, ...d } = res.body.data;
          if (typeof secret !== 'string' || !secret.startsWith('whsec_')) throw new Error('no whsec_ secret');
          c.endpoints.push(d.id);
          checkEndpointEcho(d, m.sent.value as Json);
          await checkEndpoint(c, d);
        },
      );
    case 'patchEndpoint': {
      const id = pickOf(c.endpoints, step.pick);
      if (!id) return;
      return write(
        'PATCH',
        '/webhook-endpoints/{id}',
        `/webhook-endpoints/${id}`,
        endpointPatchBases(c),
        async () => (await get(c, `/webhook-endpoints/${id}`)).data,
        async (res, m) => {
          checkEndpointEcho(res.body.data, m.sent.value as Json);
          await checkEndpoint(c, res.body.data);
        },
      );
    }
  }
}

/**
 * What a refused write must leave as it was (spec: a rejected reservation creates or updates no
 * customer): the customer a matching body names, the customer linked, and whoever the body's email
 * or phone finds.
 */
async function witnesses(c: Ctx, m: Mutated, linked: string | null): Promise<Json> {
  const body = m.sent.value as Json;
  const out: Json = {};
  const ids = [known(c)?.id, linked].filter(Boolean) as string[];
  for (const id of ids) out[id] = (await c.svc.api('GET', `/customers/${id}`, { token: c.token })).body;
  const sources = [body, body?.customer].filter((x) => x && typeof x === 'object');
  for (const src of sources)
    for (const [k, filter] of [
      ['email', 'email'],
      ['phone_number', 'phone'],
    ] as const) {
      const v = src[k];
      if (typeof v !== 'string' || !v.trim()) continue;
      const res = await c.svc.api('GET', `/customers?${filter}=${encodeURIComponent(v)}`, { token: c.token });
      out[`${filter}=${v}`] = res.status === 200 ? res.body.data : res.status;
    }
  return out;
}

function same(actual: unknown, expected: unknown, where: string) {
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(
      `${where} differs from the write's answer\n    answer: ${short(expected)}\n    read:   ${short(actual)}`,
    );
}

const has = (o: Json, k: string) => o !== null && typeof o === 'object' && Object.hasOwn(o, k);

/** The fields a reservation write sent come back as sent. */
async function checkReservationEcho(c: Ctx, r: Json, sent: Json, kind: 'create' | 'patch') {
  if (!sent || typeof sent !== 'object') return;
  const plain = [
    'party_size',
    'source',
    'custom_message',
    'allergies',
    'metadata',
    'tags',
    'attached_files',
    'total_amount_paid',
    'is_table_definitive',
    'send_followup_email',
  ];
  for (const k of plain)
    if (has(sent, k) && sent[k] !== null && !isDeepStrictEqual(r[k], echoed(k, sent[k])))
      throw new Error(`${k}: sent ${short(sent[k])}, answered ${short(r[k])}`);
  if (has(sent, 'external_id') && sent.external_id !== r.external_id)
    throw new Error(`external_id: sent ${short(sent.external_id)}, answered ${short(r.external_id)}`);
  if (
    has(sent, 'start_at') &&
    typeof sent.start_at === 'string' &&
    Date.parse(r.start_at) !== Date.parse(sent.start_at)
  )
    throw new Error(`start_at: sent ${sent.start_at}, answered ${r.start_at}`);
  if (has(sent, 'discount_id') && (r.discount?.id ?? null) !== sent.discount_id)
    throw new Error(`discount_id: sent ${short(sent.discount_id)}, answered ${short(r.discount)}`);
  if (has(sent, 'prescriber_id') && (r.prescriber?.id ?? null) !== sent.prescriber_id)
    throw new Error(`prescriber_id: sent ${short(sent.prescriber_id)}, answered ${short(r.prescriber)}`);
  if (has(sent, 'customer')) {
    const cu = sent.customer;
    if (cu === null && r.customer !== null)
      throw new Error(`customer: sent null, answered ${short(r.customer)}`);
    if (cu && has(cu, 'id') && r.customer?.id !== cu.id)
      throw new Error(`customer: sent {id: ${cu.id}}, answered ${short(r.customer)}`);
    // An inline customer new to this run is created from what was sent.
    const fresh = r.customer && !c.seenCustomers.has(r.customer.id);
    if (cu && !has(cu, 'id') && fresh && (kind === 'create' || typeof cu.name === 'string')) {
      if (typeof cu.name === 'string' && r.customer.name !== cu.name)
        throw new Error(`customer.name: sent ${short(cu.name)}, answered ${short(r.customer.name)}`);
      if (typeof cu.lang === 'string' && r.customer.lang !== cu.lang)
        throw new Error(`customer.lang: sent ${cu.lang}, answered ${r.customer.lang}`);
    }
  }
  if (r.customer) {
    c.seenCustomers.add(r.customer.id);
    if (!c.customers.includes(r.customer.id)) c.customers.push(r.customer.id);
  }
}

/** Free text that may be cleared reads null when sent with no visible character (clearableText). */
const CLEARABLE = new Set(['custom_message', 'allergies', 'note', 'description']);

/**
 * What a write answers for a value sent: tags (customers' and reservations') keep one of each in
 * order, and a clearable text with no visible character reads null (src/core/text.ts).
 */
function echoed(k: string, v: unknown): unknown {
  if ((k === 'tags' || k === 'attached_files') && Array.isArray(v)) return distinctInOrder(v);
  if (CLEARABLE.has(k) && typeof v === 'string') return blankAsNull(v);
  // A webhook endpoint's custom header values are secrets: answered by name only.
  if (k === 'headers' && v && typeof v === 'object')
    return Object.fromEntries(Object.keys(v).map((n) => [n, '[redacted]']));
  return v;
}

function checkCustomerEcho(d: Json, sent: Json) {
  if (!sent || typeof sent !== 'object') return;
  for (const k of ['name', 'external_id', 'lang', 'tags', 'note', 'newsletter_consent'])
    if (has(sent, k) && !isDeepStrictEqual(d[k], echoed(k, sent[k])))
      throw new Error(`${k}: sent ${short(sent[k])}, answered ${short(d[k])}`);
  if (has(sent, 'email') && (d.email?.toLowerCase() ?? null) !== (sent.email?.toLowerCase() ?? null))
    throw new Error(`email: sent ${short(sent.email)}, answered ${short(d.email)}`);
  if (has(sent, 'phone_number') && (sent.phone_number === null) !== (d.phone_number === null))
    throw new Error(`phone_number: sent ${short(sent.phone_number)}, answered ${short(d.phone_number)}`);
  if (has(sent, 'custom_fields') && sent.custom_fields && typeof sent.custom_fields === 'object')
    for (const [k, v] of Object.entries(sent.custom_fields)) {
      const stored = d.custom_fields?.[k];
      if (v === null ? stored !== undefined : !isDeepStrictEqual(stored?.value, v))
        throw new Error(`custom_fields.${k}: sent ${short(v)}, answered ${short(stored)}`);
    }
}

function checkEndpointEcho(d: Json, sent: Json) {
  if (!sent || typeof sent !== 'object') return;
  for (const k of ['url', 'description', 'enabled_events', 'headers', 'disabled'])
    if (has(sent, k) && !isDeepStrictEqual(d[k], echoed(k, sent[k])))
      throw new Error(`${k}: sent ${short(sent[k])}, answered ${short(d[k])}`);
}

const UPCOMING = [
  'PENDING',
  'PENDING_PAYMENT',
  'CONFIRMED',
  'CONFIRMED_PENDING_PAYMENT',
  'MANUALLY_CONFIRMED',
  'DOUBLE_CONFIRMED',
];

/** A missed call names its customer's next upcoming reservation (or none when there is none). */
async function nextReservationAgrees(c: Ctx, call: Json) {
  const mine = await get(c, `/reservations?customer_id=${encodeURIComponent(call.customer_id)}&per_page=100`);
  const now = c.svc.clock.now().getTime();
  const upcoming = mine.data
    .filter((r: Json) => UPCOMING.includes(r.status) && Date.parse(r.start_at) >= now)
    .map((r: Json) => ({ id: r.id, at: Date.parse(r.start_at) }));
  const first = Math.min(...upcoming.map((u: Json) => u.at));
  const fits = upcoming.filter((u: Json) => u.at === first).map((u: Json) => u.id);
  if (call.reservation_id === null ? fits.length > 0 : !fits.includes(call.reservation_id))
    throw new Error(
      `missed call ${call.id} names reservation ${call.reservation_id}; the customer's next are ${short(fits)} of ${short(mine.data.map((r: Json) => [r.id, r.status, r.start_at]))}`,
    );
}

/**
 * A reservation's history tells its changes in order: each change's `from` is the `to` before it, and
 * the last `to` of a field is its value now.
 */
async function historyAgrees(c: Ctx, r: Json) {
  const history = (await get(c, `/reservations/${r.id}/history`)).data;
  const last = new Map<string, unknown>();
  for (const entry of history)
    for (const change of entry.changes) {
      if (
        has(change, 'from') &&
        last.has(change.field) &&
        !sameValue(change.field, change.from, last.get(change.field))
      )
        throw new Error(
          `history of ${r.id}: revision ${entry.revision} changes ${change.field} from ${short(change.from)}, but the change before set ${short(last.get(change.field))}`,
        );
      if (has(change, 'to')) last.set(change.field, change.to);
    }
  for (const [field, to] of last)
    if (
      has(r, field) &&
      !['updated_at', 'customer', 'tables', 'room'].includes(field) &&
      !sameValue(field, to, r[field])
    )
      throw new Error(
        `history of ${r.id} ends with ${field} = ${short(to)}, the reservation has ${short(r[field])}`,
      );
}

const sameValue = (field: string, a: unknown, b: unknown) =>
  /_at$/.test(field) && typeof a === 'string' && typeof b === 'string'
    ? Date.parse(a) === Date.parse(b)
    : isDeepStrictEqual(a, b);

/** A reservation reads back, lists, filters and syncs as the write answered it. */
async function checkReservation(c: Ctx, r: Json) {
  same((await get(c, `/reservations/${r.id}`)).data, r, 'GET /reservations/{id}');
  // The customer summary is joined at read time (docs/RESERVATIONS.md): its edits are the customer's.
  movedOn(c.lastReservations.get(r.id), r, (x) => ({ ...x, customer: x.customer?.id ?? null }));
  c.lastReservations.set(r.id, r);
  await historyAgrees(c, r);
  if (r.external_id) {
    const page = await get(c, `/reservations?external_id=${encodeURIComponent(r.external_id)}`);
    if (page.data.length !== 1) throw new Error(`external_id filter found ${page.data.length}`);
    same(page.data[0], r, 'GET /reservations?external_id=');
  }
  const since = await get(c, `/reservations?updated_since=${encodeURIComponent(r.updated_at)}&per_page=100`);
  const found = since.data.find((x: Json) => x.id === r.id);
  if (!found) throw new Error(`not in GET /reservations?updated_since=${r.updated_at}`);
  same(found, r, 'GET /reservations?updated_since=');
  const day = await get(
    c,
    `/reservations?start_at_from=${encodeURIComponent(r.start_at)}&start_at_to=${encodeURIComponent(r.start_at)}&per_page=100`,
  );
  if (!day.data.some((x: Json) => x.id === r.id))
    throw new Error(`not in its own start_at window ${r.start_at}`);
  if (r.customer) {
    const cus = (await get(c, `/customers/${r.customer.id}`)).data;
    agrees(r, cus);
    await checkCustomer(c, cus);
    const mine = await get(c, `/reservations?customer_id=${encodeURIComponent(cus.id)}&per_page=100`);
    if (!mine.data.some((x: Json) => x.id === r.id))
      throw new Error(`not listed under customer_id ${cus.id}`);
  }
}

/**
 * A record that changed since it was last read has a later updated_at: a sync by updated_since
 * (spec §4 GET /customers) would otherwise never fetch the change.
 */
function movedOn(before: Json, now: Json, relevant: (x: Json) => Json) {
  if (!before) return;
  const strip = (x: Json) => ({ ...relevant(x), updated_at: undefined });
  if (isDeepStrictEqual(strip(before), strip(now))) return;
  if (!(now.updated_at > before.updated_at)) {
    const changed = Object.keys(now).filter((k) => !isDeepStrictEqual(strip(before)[k], strip(now)[k]));
    throw new Error(
      `${now.id} changed (${changed.map((k) => `${k}: ${short(before[k])} → ${short(now[k])}`).join('; ')}) but its updated_at stayed ${now.updated_at} (was ${before.updated_at})`,
    );
  }
}

/** A reservation's customer summary is the customer record's. */
function agrees(r: Json, cus: Json) {
  for (const k of ['name', 'email', 'phone_number', 'lang'])
    if (r.customer[k] !== cus[k])
      throw new Error(
        `reservation ${r.id}'s customer.${k} ${short(r.customer[k])} but GET /customers/${cus.id} has ${short(cus[k])}`,
      );
}

/** A customer reads back, looks up and syncs as the write answered it; its reservations agree. */
async function checkCustomer(c: Ctx, d: Json) {
  movedOn(c.details.get(d.id), d, (x) => ({ ...x, stats: undefined }));
  c.details.set(d.id, d);
  if (d.phone_number && !c.phones.includes(d.phone_number)) c.phones.push(d.phone_number);
  same((await get(c, `/customers/${d.id}`)).data, d, 'GET /customers/{id}');
  const feed = await get(c, `/customers?updated_since=${encodeURIComponent(d.updated_at)}&limit=100`);
  const found = feed.data.find((x: Json) => x.id === d.id);
  if (!found)
    throw new Error(
      `not in GET /customers?updated_since=${d.updated_at}: ${short(feed.data.map((x: Json) => x.id))}`,
    );
  same(found, d, 'GET /customers?updated_since=');
  const lookups: [string, string][] = [];
  if (d.external_id) lookups.push(['external_id', d.external_id]);
  // The filters match other spellings: the address in capitals, the number as dialled nationally.
  if (d.email) lookups.push(['email', d.email]);
  // (Not where capitals spell it otherwise: straße is STRASSE.)
  const upper = d.email?.toUpperCase();
  if (upper && upper.toLowerCase() === d.email.toLowerCase()) lookups.push(['email', upper]);
  if (d.phone_number) lookups.push(['phone', d.phone_number], ['phone', national(d.phone_number)]);
  for (const t of d.tags.slice(0, 3)) lookups.push(['tag', t]);
  for (const [k, v] of lookups) {
    const page = await get(c, `/customers?${k}=${encodeURIComponent(v)}&limit=100`);
    const hit = page.data.find((x: Json) => x.id === d.id);
    if (!hit) throw new Error(`GET /customers?${k}=${short(v)} does not find it`);
    same(hit, d, `GET /customers?${k}=`);
  }
  const mine = await get(c, `/reservations?customer_id=${encodeURIComponent(d.id)}&per_page=100`);
  for (const r of mine.data) if (r.customer) agrees(r, d);
  if (mine.pagination.total <= 100) statsAgree(d, mine.data);
}

const RELEASED = ['REJECTED', 'CANCELED_BY_CUSTOMER', 'CANCELED_BY_RESTAURANT'];
const round2 = (n: number) => Math.round(n * 100) / 100;

/** A customer's stats (spec §2.2) are those of the reservations listed under its id. */
function statsAgree(d: Json, reservations: Json[]) {
  const counted = reservations.filter((r) => !RELEASED.includes(r.status));
  const paid = counted.reduce((a, r) => a + r.total_amount_paid, 0);
  const covers = counted.reduce((a, r) => a + r.party_size, 0);
  // start_at carries the restaurant's offset: its date is the restaurant's calendar date.
  const dates = counted.map((r) => (r.start_at as string).slice(0, 10)).sort();
  const expected = {
    reservation_count: counted.length,
    confirmed_count: counted.filter((r) => r.status !== 'NO_SHOW').length,
    no_show_count: counted.filter((r) => r.status === 'NO_SHOW').length,
    total_amount_paid: paid,
    average_basket: covers ? round2(paid / covers) : 0,
    last_reservation_date: dates.at(-1) ?? null,
  };
  const actual = Object.fromEntries(Object.keys(expected).map((k) => [k, d.stats[k]]));
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(
      `customer ${d.id}'s stats ${short(actual)} but its reservations (${short(reservations.map((r) => [r.id, r.status, r.party_size, r.total_amount_paid, r.start_at]))}) make ${short(expected)}`,
    );
}

/**
 * What a partner's webhook endpoint (every event type) ends up believing: for each record, its latest
 * event (by data.object.updated_at, as the delivery rules say to order them) is the record as it reads
 * now. Customer stats are left out: they change without an event (spec §2.1); so is a reservation's
 * customer summary, but for its id.
 */
export async function checkEventsAgree(c: Ctx, events: Json[]): Promise<string[]> {
  const latest = new Map<string, Json>();
  for (const e of events) {
    const o = e?.data?.object;
    if (!o?.id || !/^(reservation|customer)\./.test(e.type)) continue;
    const before = latest.get(o.id);
    if (!before || before.data.object.updated_at <= o.updated_at) latest.set(o.id, e);
  }
  const failures: string[] = [...previousAttributesAgree(events)];
  for (const [id, e] of latest) {
    const customer = e.type.startsWith('customer.');
    if (e.type === 'customer.deleted' || e.type === 'customer.merged') continue;
    const res = await c.svc.api('GET', `/${customer ? 'customers' : 'reservations'}/${id}`, {
      token: c.token,
    });
    if (res.status !== 200) {
      failures.push(`${e.type} for ${id}, which reads ${res.status}`);
      continue;
    }
    // A reservation's customer is joined at read time (docs/RESERVATIONS.md): a later edit of the
    // customer is its own customer.updated, not the reservation's.
    const strip = (o: Json) =>
      customer ? { ...o, stats: undefined } : { ...o, customer: o.customer ? o.customer.id : null };
    if (!isDeepStrictEqual(strip(e.data.object), strip(res.body.data)))
      failures.push(
        `the latest ${e.type} of ${id} differs from GET\n    event: ${short(e.data.object)}\n    read:  ${short(res.body.data)}`,
      );
  }
  return failures;
}

async function checkEndpoint(c: Ctx, d: Json) {
  same((await get(c, `/webhook-endpoints/${d.id}`)).data, d, 'GET /webhook-endpoints/{id}');
  let page = 1;
  for (;;) {
    const list = await get(c, `/webhook-endpoints?page=${page}&per_page=100`);
    const found = list.data.find((x: Json) => x.id === d.id);
    if (found) return same(found, d, 'GET /webhook-endpoints');
    if (!list.pagination.has_more) throw new Error(`endpoint ${d.id} not listed`);
    page++;
  }
}

/** The whole sync, as a partner's first run does it: every record once, each as it reads alone. */
async function checkWholeFeeds(c: Ctx) {
  const seen = new Map<string, Json>();
  let cursor: string | null = null;
  let previousKey: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const page = await get(c, `/customers?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    for (const x of page.data) {
      if (seen.has(x.id)) throw new Error(`customer ${x.id} twice in one full sync`);
      const key = `${x.updated_at} ${x.id}`;
      if (previousKey !== null && key < previousKey)
        throw new Error(`full sync out of order: ${key} after ${previousKey}`);
      previousKey = key;
      seen.set(x.id, x);
    }
    if (!page.pagination.has_more) break;
    cursor = page.pagination.next_cursor;
  }
  for (const id of c.customers) {
    const res = await c.svc.api('GET', `/customers/${id}`, { token: c.token });
    if (res.status === 404) continue; // merged or deleted
    if (res.status !== 200) throw new Error(`GET /customers/${id} answered ${res.status}`);
    const listed = seen.get(id);
    if (!listed) throw new Error(`customer ${id} reads but is missing from the full sync`);
    same(listed, res.body.data, `full sync entry of ${id}`);
  }
  for (let page = 1; ; page++) {
    const list = await get(c, `/reservations?page=${page}&per_page=100`);
    for (const r of list.data) {
      same((await get(c, `/reservations/${r.id}`)).data, r, `listed reservation ${r.id}`);
      if (r.customer) agrees(r, (await get(c, `/customers/${r.customer.id}`)).data);
    }
    if (!list.pagination?.has_more) break;
  }
}

/**
 * Each `*.updated` or `*.canceled` event's previous_attributes are the fields that changed since the
 * event before it, with that event's values (docs/WEBHOOKS.md). Pairs are taken only where each event
 * is alone at its updated_at, so their order is known.
 */
/** How many event pairs the last check compared (a run that compares none checks nothing). */
export let pairsChecked = 0;

function previousAttributesAgree(events: Json[]): string[] {
  pairsChecked = 0;
  const byId = new Map<string, Json[]>();
  for (const e of events) {
    const o = e?.data?.object;
    if (!o?.id || !/^(reservation|customer)\./.test(e.type)) continue;
    byId.set(o.id, [...(byId.get(o.id) ?? []), e]);
  }
  const failures: string[] = [];
  const ignored = new Set(['updated_at', 'stats', 'customer']);
  const customerId = (v: Json) => (v && typeof v === 'object' ? v.id : null);
  for (const [id, list] of byId) {
    const stamps = new Map<string, number>();
    for (const e of list)
      stamps.set(e.data.object.updated_at, (stamps.get(e.data.object.updated_at) ?? 0) + 1);
    const alone = list
      .filter((e) => stamps.get(e.data.object.updated_at) === 1)
      .sort((a, b) => (a.data.object.updated_at < b.data.object.updated_at ? -1 : 1));
    // Only neighbours with no event between them (one sharing a stamp would be between, unordered).
    const all = [...stamps.keys()].sort();
    for (let i = 1; i < alone.length; i++) {
      const prev = alone[i - 1].data.object;
      const cur = alone[i];
      if (all.indexOf(cur.data.object.updated_at) !== all.indexOf(prev.updated_at) + 1) continue;
      const before = cur.data.previous_attributes;
      if (!before || !/\.(updated|canceled)$/.test(cur.type)) continue;
      pairsChecked++;
      const keys = new Set([...Object.keys(prev), ...Object.keys(cur.data.object)]);
      for (const k of keys) {
        if (ignored.has(k)) continue;
        const expected = Object.hasOwn(before, k) ? before[k] : cur.data.object[k];
        if (!isDeepStrictEqual(prev[k], expected))
          failures.push(
            `${cur.type} ${cur.id} of ${id}: ${k} was ${short(prev[k])} in the event before, ${Object.hasOwn(before, k) ? `previous_attributes says ${short(before[k])}` : `unchanged per previous_attributes, now ${short(cur.data.object[k])}`}`,
          );
      }
      if (id.startsWith('res_')) {
        const was = Object.hasOwn(before, 'customer')
          ? customerId(before.customer)
          : customerId(cur.data.object.customer);
        if (customerId(prev.customer) !== was)
          failures.push(
            `${cur.type} ${cur.id} of ${id}: customer was ${customerId(prev.customer)}, the event says ${was}`,
          );
      }
    }
  }
  return failures;
}

/**
 * Every read the data of the run reaches, as a partner and as the restaurant's manager: none answers
 * 5xx (each partner answer is held to the OpenAPI document by the client as well).
 */
async function readEverything(
  c: Ctx,
  watched: string[],
  page?: (path: string) => Promise<{ status: number; text: string }>,
): Promise<string[]> {
  const failures: string[] = [];
  const read = async (path: string) => {
    const res = await c.svc.api('GET', path, { token: c.token });
    if (res.status >= 500) failures.push(`GET ${path} answered ${res.status}: ${res.text.slice(0, 200)}`);
    return res;
  };
  for (const id of c.reservations) await read(`/reservations/${id}/history`);
  for (const id of c.calls) await read(`/missed-calls/${id}`);
  for (const status of ['CONFIRMED', 'PENDING,CANCELED_BY_RESTAURANT', 'NO_SHOW'])
    await read(`/reservations?status=${status}&per_page=100`);
  for (const outcome of ['SENT', 'SKIPPED_COOLDOWN'])
    await read(`/missed-calls?outcome=${outcome}&limit=100`);
  for (let cursor: string | null = null, i = 0; i < 50; i++) {
    const res = await read(`/missed-calls?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (res.status !== 200 || !res.body.pagination.has_more) break;
    cursor = res.body.pagination.next_cursor;
  }
  for (const day of ['2026-06-03', '2026-10-25', '2027-03-28'])
    await read(
      `/availability?start_at_from=${encodeURIComponent(`${day}T00:00:00Z`)}&start_at_to=${encodeURIComponent(`${day}T23:59:59Z`)}&party_size=2`,
    );
  for (const id of [...watched, ...c.endpoints]) {
    const deliveries = await read(`/webhook-endpoints/${id}/deliveries`);
    for (const d of (deliveries.body?.data ?? []).slice(0, 5))
      await read(`/webhook-endpoints/${id}/deliveries/${d.id}`);
  }
  if (page) {
    const q = 'restaurant=rest_demo';
    const pages = [
      '/dashboard',
      '/dashboard/insights',
      '/dashboard/webhooks',
      '/dashboard/api-keys',
      '/dashboard/import',
    ];
    for (const id of [...watched, ...c.endpoints]) pages.push(`/dashboard/webhooks/${id}`);
    for (const p of pages) {
      const res = await page(`${p}?${q}`);
      if (res.status >= 500) failures.push(`page ${p} answered ${res.status}: ${res.text.slice(0, 200)}`);
      if (res.status !== 200) failures.push(`page ${p} answered ${res.status} to the signed-in manager`);
    }
  }
  return failures;
}
