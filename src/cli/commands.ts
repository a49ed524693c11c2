// Every operator command module. A module adds its commands by exporting a register function listed here.
import { registerAnalyticsCommands } from './analytics-commands';
import { registerAuditCommands } from './audit-commands';
import { registerBackupCommands } from './backup-commands';
import { registerCustomerCommands } from './customer-commands';
import { registerCustomerImportCommands } from './customer-import-commands';
import { registerPlatformCommands } from './platform-commands';
import { registerProjectionCommands } from './projection-commands';
import { registerReservationCommands } from './reservation-commands';

let registered = false;
export function registerAllCliCommands(): void {
  if (registered) return;
  registered = true;
  registerPlatformCommands();
  registerCustomerCommands();
  registerCustomerImportCommands();
  registerReservationCommands();
  registerAuditCommands();
  registerAnalyticsCommands();
  registerProjectionCommands();
  registerBackupCommands();
}
