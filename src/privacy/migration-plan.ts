// A migration step reads its plan (which rows, whose keys) and fetches keys before its one write
// transaction; another process may append in between. The step hands the head its plan saw to the
// store's upgrade, which refuses a plan the log has outgrown (StalePlanError), and is planned again.
import { type SqliteEventStore, StalePlanError } from '../adapters/event-store/sqlite';

const PLAN_TRIES = 10;

/**
 * Runs a migration step (read its plan, fetch keys, then one write transaction given the head the plan
 * saw) again while the log grows between its plan and its transaction.
 */
export async function untilPlanHolds<T>(
  store: SqliteEventStore,
  step: (plannedAt: number | null) => Promise<T>,
): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await step(store.planHead());
    } catch (err) {
      if (!(err instanceof StalePlanError) || tries >= PLAN_TRIES) throw err;
    }
  }
}
