// Every operator command module. A module adds its commands by exporting a register function listed here.
import { registerCustomerCommands } from './customer-commands';
import { registerCustomerImportCommands } from './customer-import-commands';
import { registerPlatformCommands } from './platform-commands';
import { registerReservationCommands } from './reservation-commands';

let registered = false;
export function registerAllCliCommands(): void {
  if (registered) return;
  registered = true;
  registerPlatformCommands();
  registerCustomerCommands();
  registerCustomerImportCommands();
  registerReservationCommands();
}
