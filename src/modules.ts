// Feature modules hook into the platform here (bootstrap sections, demo data, CLI commands, scheduled
// jobs). Called once by the server and by the CLI before anything runs.
import { registerCatalogModule } from './catalog-module';
import { registerInsightsModule } from './insights-module';
import { reservationJobs } from './jobs/reservation-jobs';
import { registerMissedCallsModule } from './missed-calls-module';
import { registerOAuthModule } from './oauth-module';
import { registerScheduledJob } from './scheduler';
import { registerWebhooksModule } from './webhooks-module';

let done = false;
export function registerModules(): void {
  if (done) return;
  done = true;
  for (const job of reservationJobs) registerScheduledJob(job);
  registerCatalogModule();
  registerOAuthModule();
  registerWebhooksModule();
  registerMissedCallsModule();
  registerInsightsModule();
}
