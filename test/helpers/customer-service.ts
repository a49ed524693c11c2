// The customer end-to-end tests' service: two restaurants (a French and an Italian one, for phone
// numbers read with the restaurant's country), and keys with every combination of customer scopes.
import { customerStream } from '../../commands/customers/events';
import { startTestService, type TestService } from './service';

export const TOKENS = {
  /** CUSTOMERS_WRITE and CUSTOMERS_READ at the French restaurant. */
  write: 'couvert_pk_customers_write_000000000000000001',
  read: 'couvert_pk_customers_read_0000000000000000002',
  none: 'couvert_pk_customers_none_0000000000000000003',
  /** CUSTOMERS_WRITE alone: scopes are never widened, so customer writes are refused. */
  writeOnly: 'couvert_pk_customers_wonly_000000000000000005',
  /** CUSTOMERS_WRITE and CUSTOMERS_READ at the Italian restaurant. */
  other: 'couvert_pk_customers_other_000000000000000004',
} as const;

const restaurant = (
  id: string,
  slug: string,
  country: string,
  keys: { id: string; token: string; scopes: string[] }[],
) => ({
  id,
  name: id,
  slug,
  country_code: country,
  timezone: country === 'FR' ? 'Europe/Paris' : 'Europe/Rome',
  currency: 'EUR',
  api_option: true,
  customer_matching: true,
  api_keys: keys.map((k) => ({ ...k, name: k.id })),
});

/** One custom field of each type (spec §2.4), defined at the French restaurant. */
export const CUSTOM_FIELDS = [
  { id: 'cf_text', name: 'Favourite dish', type: 'TEXT' },
  { id: 'cf_kids', name: 'Children', type: 'NUMBER', min: 0, max: 10 },
  { id: 'cf_birthday', name: 'Birthday', type: 'DATE' },
  { id: 'cf_terrace', name: 'Terrace', type: 'BOOLEAN' },
  { id: 'cf_vip', name: 'VIP level', type: 'SELECT', options: ['gold', 'silver'] },
  { id: 'cf_diet', name: 'Diet', type: 'MULTI_SELECT', options: ['vegan', 'halal', 'kosher'], max_items: 2 },
];

export const customerBootstrap = {
  restaurants: [
    {
      ...restaurant('rest_fr', 'chez-fr', 'FR', [
        { id: 'key_write', token: TOKENS.write, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
        { id: 'key_write_only', token: TOKENS.writeOnly, scopes: ['CUSTOMERS_WRITE'] },
        { id: 'key_read', token: TOKENS.read, scopes: ['CUSTOMERS_READ'] },
        { id: 'key_none', token: TOKENS.none, scopes: ['CATALOG_READ'] },
      ]),
      customer_fields: CUSTOM_FIELDS,
    },
    restaurant('rest_it', 'da-it', 'IT', [
      { id: 'key_other', token: TOKENS.other, scopes: ['CUSTOMERS_READ', 'CUSTOMERS_WRITE'] },
    ]),
  ],
};

export const startCustomerService = (env: Record<string, string> = {}): Promise<TestService> =>
  startTestService({ bootstrap: customerBootstrap, env });

/** How many events a customer's stream holds: "nothing written" is checked on the log itself. */
export async function streamLength(svc: TestService, id: string): Promise<number> {
  return (await svc.rt.events.readStream(customerStream(id))).length;
}
