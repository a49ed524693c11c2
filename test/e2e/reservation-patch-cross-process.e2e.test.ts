// A PATCH (and a POST) carrying inline customer details, raced by another process on the same data
// dir (the operator's CLI, a second API process: their commands do not queue behind this process's,
// runOnStream in src/core/command.ts). Whatever lands in between, a refused request has written no
// customer, and a customer a PATCH wrote is connected to its reservation unless another change of
// customer landed in between, which stands and leaves ours connected to nothing; a PATCH whose customer
// is its first write is decided again on what landed before that write (docs/RESERVATIONS.md, "Order of
// writes").
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createReservation } from '../../commands/reservations/handler-create';
import { updateReservation } from '../../commands/reservations/handler-update';
import { runCli } from '../helpers/cli-process';
import { withHook, withHookAfter, withReadHook } from '../helpers/hooked-events';
import { create, type ReservationService, startReservationService, TOKENS } from '../helpers/reservations';
import { spawnServer } from '../helpers/spawned-server';

const t = suite<{ svc: ReservationService }>(
  'reservations: a PATCH with a customer, raced by another process',
);
t.before(async (ctx) => {
  ctx.svc = await startReservationService();
});
t.after(async ({ svc }) => svc.close());

const restaurant = {
  _id: 'rest_demo',
  timezone: 'Europe/Paris',
  currency: 'EUR',
  country_code: 'FR',
  customer_matching: true,
};
const meta = { actor: 'test' };
const at = (day: string, hhmm: string) => `2026-06-${day}T${hhmm}:00+02:00`;

/** The CLI, in a process of its own, on the service's data dir. */
async function cli(svc: ReservationService, args: string[]): Promise<void> {
  const run = await runCli(svc, args);
  assert.is(run.code, 0, `${args.join(' ')}: ${run.stderr}`);
}

const cancelByStaff = (svc: ReservationService, id: string) => () =>
  cli(svc, ['reservations', 'cancel-by-staff', '--id', id, '--reason', 'raced']);

async function reservation(svc: ReservationService, id: string) {
  await svc.rt.settle(await svc.rt.events.headPosition());
  return (await svc.api('GET', `/reservations/${id}`, { token: TOKENS.full })).body.data;
}

async function customersWithEmail(svc: ReservationService, email: string) {
  await svc.rt.settle(await svc.rt.events.headPosition());
  const res = await svc.api('GET', `/customers?email=${encodeURIComponent(email)}`, { token: TOKENS.full });
  return res.body.data as { id: string; name: string; email: string }[];
}

async function refusal(run: Promise<unknown>): Promise<{ status?: number; reason?: string }> {
  try {
    await run;
  } catch (err) {
    const e = err as { status?: number; details?: { reason?: string } };
    return { status: e.status, reason: e.details?.reason };
  }
  assert.unreachable('the PATCH was refused');
  return {};
}

t('refused because the CLI canceled the reservation first: no customer is created', async ({ svc }) => {
  const r = (await create(svc, { start_at: at('10', '19:00') })).body.data;
  // The cancel lands just before our first write on the reservation's stream.
  const rt = withHook(svc.rt, (s) => s === `reservation-${r.id}`, cancelByStaff(svc, r.id));
  const refused = await refusal(
    updateReservation(
      rt,
      restaurant,
      r.id,
      { start_at: at('10', '20:00'), customer: { name: 'Never Made', email: 'never.made@example.com' } },
      meta,
    ),
  );
  assert.equal(refused, { status: 422, reason: 'RESERVATION_CANCELED' });
  assert.equal(await customersWithEmail(svc, 'never.made@example.com'), []);
  const now = await reservation(svc, r.id);
  assert.equal([now.status, now.start_at, now.customer], ['CANCELED_BY_RESTAURANT', r.start_at, null]);
});

t(
  'refused because the CLI canceled the reservation first: the linked customer is not updated',
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('11', '19:00'),
        customer: { name: 'Kept As Is', email: 'kept.as.is@example.com', on_match: 'create_new' },
      })
    ).body.data;
    const rt = withHook(svc.rt, (s) => s === `reservation-${r.id}`, cancelByStaff(svc, r.id));
    const refused = await refusal(
      updateReservation(
        rt,
        restaurant,
        r.id,
        { start_at: at('11', '20:00'), customer: { email: 'changed.anyway@example.com' } },
        meta,
      ),
    );
    assert.equal(refused, { status: 422, reason: 'RESERVATION_CANCELED' });
    assert.equal(await customersWithEmail(svc, 'changed.anyway@example.com'), []);
    const kept = await customersWithEmail(svc, 'kept.as.is@example.com');
    assert.equal(
      kept.map((c) => c.id),
      [r.customer.id],
    );
  },
);

t(
  'a POS lock on the customer set by the CLI once the PATCH wrote its customer: the customer is connected',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('12', '19:00') })).body.data;
    const rt = withHookAfter(
      svc.rt,
      (s) => s.startsWith('customer-'),
      () => cli(svc, ['reservations', 'lock', '--id', r.id, '--fields', 'customer']),
    );
    await updateReservation(
      rt,
      restaurant,
      r.id,
      { customer: { name: 'Locked Out', email: 'locked.out@example.com' } },
      meta,
    );
    const made = await customersWithEmail(svc, 'locked.out@example.com');
    assert.is(made.length, 1);
    const now = await reservation(svc, r.id);
    assert.is(now.customer?.id, made[0]?.id);
    // The lock landed after the PATCH was decided: it holds from now on.
    const later = await svc.api('PATCH', `/reservations/${r.id}`, {
      token: TOKENS.full,
      body: { customer: null },
    });
    assert.is(later.status, 409);
  },
);

t(
  'a POS lock on the allergies set by the CLI before a PATCH of only text and inline details wrote anything: 409, no customer',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('20', '19:00') })).body.data;
    // The PATCH appends nothing to the reservation before its customer: the lock lands between its
    // checks (its first read of the reservation) and its first write, the customer's.
    const rt = withReadHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      2,
      () => cli(svc, ['reservations', 'lock', '--id', r.id, '--fields', 'allergies']),
    );
    const refused = await refusal(
      updateReservation(
        rt,
        restaurant,
        r.id,
        { allergies: 'sesame', customer: { name: 'Locked Text', email: 'locked.text@example.com' } },
        meta,
      ),
    );
    assert.is(refused.status, 409);
    assert.equal(await customersWithEmail(svc, 'locked.text@example.com'), []);
    const now = await reservation(svc, r.id);
    assert.equal([now.allergies, now.customer], [r.allergies, null]);
  },
);

/** A customer of the restaurant, made through the API. */
async function newCustomer(svc: ReservationService, name: string, email: string): Promise<string> {
  const res = await svc.api('POST', '/customers', { token: TOKENS.full, body: { name, email } });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.data.id as string;
}

async function customer(svc: ReservationService, id: string) {
  await svc.rt.settle(await svc.rt.events.headPosition());
  return (await svc.api('GET', `/customers/${id}`, { token: TOKENS.full })).body.data as {
    id: string;
    name: string;
    email: string | null;
    phone_number: string | null;
  };
}

// A PATCH of only inline details appends nothing before its customer: its plan (update the linked
// customer, or find or create one when nobody is linked) was made on its first read of the reservation.
// A change of customer landing before its first write comes before the PATCH, which is then decided again
// on it (the spec: details without id update the customer linked then).
t(
  'a customer connected by a second API process before a PATCH of only inline details wrote anything: the details update that customer, none is created',
  async ({ svc }) => {
    const r = (await create(svc, { start_at: at('21', '19:00') })).body.data;
    const theirs = await newCustomer(svc, 'Connected Meanwhile', 'connected.meanwhile@example.com');
    const second = await spawnServer({
      DATA_DIR: svc.dataDir,
      ROLES: 'api',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    try {
      const rt = withReadHook(
        svc.rt,
        (s) => s === `reservation-${r.id}`,
        2,
        async () => {
          const res = await svc.api('PATCH', `${second.base}/api/partner/v1/reservations/${r.id}`, {
            token: TOKENS.full,
            body: { customer: { id: theirs } },
          });
          assert.is(res.status, 200, JSON.stringify(res.body));
        },
      );
      await updateReservation(
        rt,
        restaurant,
        r.id,
        { customer: { name: 'Inline Guest', email: 'inline.guest@example.com' } },
        meta,
      );
    } finally {
      await second.stop();
    }
    const now = await reservation(svc, r.id);
    assert.is(now.customer?.id, theirs);
    assert.equal(
      (await customersWithEmail(svc, 'inline.guest@example.com')).map((c) => [c.id, c.name]),
      [[theirs, 'Inline Guest']],
    );
  },
);

t(
  "another customer connected before a PATCH of only the linked customer's details wrote anything: the customer linked then is updated, the one before is not",
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('22', '19:00'),
        customer: { name: 'Linked Before', email: 'linked.before@example.com', on_match: 'create_new' },
      })
    ).body.data;
    const before = r.customer.id as string;
    const theirs = await newCustomer(svc, 'Linked Since', 'linked.since@example.com');
    // Through the service's own store: another object than the hooked one, so its command does not
    // queue behind ours (runOnStream), as another process's would not.
    const rt = withReadHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      2,
      async () => {
        await updateReservation(svc.rt, restaurant, r.id, { customer: { id: theirs } }, meta);
      },
    );
    await updateReservation(rt, restaurant, r.id, { customer: { phone_number: '+33611223344' } }, meta);
    const now = await reservation(svc, r.id);
    assert.is(now.customer?.id, theirs);
    assert.equal(
      [(await customer(svc, before)).phone_number, (await customer(svc, theirs)).phone_number],
      [null, '+33611223344'],
    );
  },
);

t(
  'the customer disconnected before a PATCH of only details without a name wrote anything: 422 CUSTOMER_NAME_REQUIRED, the customer linked before is not updated',
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('23', '19:00'),
        customer: { name: 'Let Go', email: 'let.go@example.com', on_match: 'create_new' },
      })
    ).body.data;
    const rt = withReadHook(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      2,
      async () => {
        await updateReservation(svc.rt, restaurant, r.id, { customer: null }, meta);
      },
    );
    const refused = await refusal(
      updateReservation(rt, restaurant, r.id, { customer: { email: 'not.for.them@example.com' } }, meta),
    );
    assert.equal(refused, { status: 422, reason: 'CUSTOMER_NAME_REQUIRED' });
    assert.equal(await customersWithEmail(svc, 'not.for.them@example.com'), []);
    assert.is((await customer(svc, r.customer.id)).email, 'let.go@example.com');
    assert.is((await reservation(svc, r.id)).customer, null);
  },
);

t(
  'a cancel by the CLI once the PATCH moved the reservation and wrote its customer: the customer is connected',
  async ({ svc }) => {
    // Only tbl_8 seats 7.
    const r = (await create(svc, { start_at: at('13', '19:00'), party_size: 7 })).body.data;
    const rt = withHookAfter(svc.rt, (s) => s.startsWith('customer-'), cancelByStaff(svc, r.id));
    await updateReservation(
      rt,
      restaurant,
      r.id,
      { start_at: at('13', '20:00'), customer: { name: 'Moved In', email: 'moved.in@example.com' } },
      meta,
    );
    const made = await customersWithEmail(svc, 'moved.in@example.com');
    assert.is(made.length, 1);
    const now = await reservation(svc, r.id);
    assert.equal(
      [now.status, now.start_at, now.customer?.id],
      ['CANCELED_BY_RESTAURANT', at('13', '20:00'), made[0]?.id],
    );
    // Canceled after the move: neither its old seating (19:00-20:30) nor the confirmed move holds tbl_8.
    assert.is((await create(svc, { start_at: at('13', '20:00'), party_size: 7 })).status, 201);
  },
);

t(
  'the linked customer deleted by the CLI once the PATCH moved the reservation: the move stands, 200',
  async ({ svc }) => {
    const r = (
      await create(svc, {
        start_at: at('14', '19:00'),
        customer: { name: 'Gone Meanwhile', email: 'gone.meanwhile@example.com', on_match: 'create_new' },
      })
    ).body.data;
    // The deletion lands once the reservation's change has, before the customer's update.
    const rt = withHookAfter(
      svc.rt,
      (s) => s === `reservation-${r.id}`,
      () => cli(svc, ['customers', 'delete', '--id', r.customer.id]),
    );
    await updateReservation(
      rt,
      restaurant,
      r.id,
      { start_at: at('14', '20:00'), customer: { email: 'too.late@example.com' } },
      meta,
    );
    const now = await reservation(svc, r.id);
    // As if the deletion had come right after the PATCH: it erased what the PATCH would have written.
    assert.equal([now.start_at, now.customer], [at('14', '20:00'), null]);
    assert.equal(await customersWithEmail(svc, 'too.late@example.com'), []);
  },
);

t(
  'POST: the last table taken by a second API process just before ours is held: 422, no customer written',
  async ({ svc }) => {
    // Far enough ahead for the second process, which runs on the real clock.
    const startAt = '2030-08-01T20:00:00+02:00';
    const second = await spawnServer({
      DATA_DIR: svc.dataDir,
      ROLES: 'api',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    try {
      // Only tbl_8 seats 7: the second process's booking lands just before our hold of it.
      const rt = withHook(
        svc.rt,
        (s) => s === 'capacity-rest_demo-2030-08-01',
        async () => {
          const theirs = await create(svc, { start_at: startAt, party_size: 7 }, TOKENS.full, second.base);
          assert.is(theirs.status, 201, JSON.stringify(theirs.body));
        },
      );
      const refused = await refusal(
        createReservation(
          rt,
          restaurant,
          {
            start_at: startAt,
            party_size: 7,
            customer: { name: 'Second Best', email: 'second.best@example.com' },
          },
          meta,
        ),
      );
      assert.equal(refused, { status: 422, reason: 'NO_TABLE' });
      assert.equal(await customersWithEmail(svc, 'second.best@example.com'), []);
    } finally {
      await second.stop();
    }
  },
);

t(
  'POST: the customer inline details matched, deleted by the CLI before it is updated: matched again, 201',
  async ({ svc }) => {
    const first = await create(svc, {
      start_at: at('15', '19:00'),
      customer: { name: 'First Visit', email: 'twice.here@example.com', on_match: 'create_new' },
    });
    const gone = first.body.data.customer.id as string;
    const rt = withHook(
      svc.rt,
      (s) => s === `customer-${gone}`,
      () => cli(svc, ['customers', 'delete', '--id', gone]),
    );
    const out = await createReservation(
      rt,
      restaurant,
      {
        start_at: at('15', '20:00'),
        party_size: 2,
        customer: { name: 'Second Visit', email: 'twice.here@example.com', on_match: 'update' },
      },
      meta,
    );
    const now = await reservation(svc, out.reservationId);
    // Not 404 for a customer the caller never named: the details found nobody then, and made one.
    assert.ok(now.customer && now.customer.id !== gone, JSON.stringify(now.customer));
    assert.equal(
      (await customersWithEmail(svc, 'twice.here@example.com')).map((c) => [c.id, c.name]),
      [[now.customer.id, 'Second Visit']],
    );
  },
);

t.run();
