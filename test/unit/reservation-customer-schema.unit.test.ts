// A reservation's embedded customer describes `lang` as the customer record does: one of the six
// languages, never null (the server always sends one; it was documented nullable, with no enum).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { customerDetailSchema } from '../../queries/customer-presenter';
import { reservationSchema } from '../../src/http/routes/reservation-schemas';

type Schema = { properties: Record<string, Schema>; nullable?: boolean; enum?: string[]; type?: string };

test("a reservation's customer.lang is the customer record's lang: a non-null enum", () => {
  const customer = (reservationSchema as unknown as Schema).properties.customer as Schema;
  const lang = customer.properties.lang as Schema;
  assert.equal(lang, (customerDetailSchema as unknown as Schema).properties.lang);
  assert.is(lang.nullable, undefined);
  assert.equal(lang.enum, ['FR', 'EN', 'IT', 'ES', 'DE', 'PT']);
});

test.run();
