// canonicalScopes and scopesWithoutCompanion (src/core/scopes.ts), with hand-written expectations: a
// credential holds exactly the scopes it was granted (deduplicated, in the canonical order, unknown
// names dropped), never one more (CUSTOMERS_WRITE alone does not bring CUSTOMERS_READ: spec §5).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalScopes, scopesWithoutCompanion } from '../../src/core/scopes';

test('canonical scopes: deduplicated, in the canonical order, unknown names dropped, never widened', () => {
  assert.equal(canonicalScopes(['WEBHOOKS_WRITE', 'CATALOG_READ', 'WEBHOOKS_WRITE']), [
    'CATALOG_READ',
    'WEBHOOKS_WRITE',
  ]);
  assert.equal(canonicalScopes(['CUSTOMERS_WRITE']), ['CUSTOMERS_WRITE']);
  assert.equal(canonicalScopes(['RESERVATIONS_FORCE_INSERT']), ['RESERVATIONS_FORCE_INSERT']);
  assert.equal(canonicalScopes(['customers_read', 'ADMIN', '', 'CUSTOMERS_READ ']), []);
  assert.equal(canonicalScopes([]), []);
  assert.equal(
    canonicalScopes([
      'MISSED_CALLS_WRITE',
      'RESERVATIONS_READ_SENSITIVE',
      'AVAILABILITY_READ',
      'RESERVATIONS_READ',
    ]),
    ['AVAILABILITY_READ', 'RESERVATIONS_READ', 'RESERVATIONS_READ_SENSITIVE', 'MISSED_CALLS_WRITE'],
  );
});

test('a scope without its companion is named with it; with the companion, or alone without one, nothing', () => {
  assert.equal(scopesWithoutCompanion(['CUSTOMERS_WRITE']), [
    { scope: 'CUSTOMERS_WRITE', needs: 'CUSTOMERS_READ' },
  ]);
  assert.equal(scopesWithoutCompanion(['RESERVATIONS_FORCE_CONFIRM', 'RESERVATIONS_FORCE_INSERT']), [
    { scope: 'RESERVATIONS_FORCE_INSERT', needs: 'RESERVATIONS_WRITE' },
    { scope: 'RESERVATIONS_FORCE_CONFIRM', needs: 'RESERVATIONS_WRITE' },
  ]);
  assert.equal(scopesWithoutCompanion(['CUSTOMERS_WRITE', 'CUSTOMERS_READ']), []);
  assert.equal(scopesWithoutCompanion(['RESERVATIONS_FORCE_INSERT', 'RESERVATIONS_WRITE']), []);
  assert.equal(scopesWithoutCompanion(['RESERVATIONS_READ_SENSITIVE', 'RESERVATIONS_CANCEL']), []);
});

test.run();
