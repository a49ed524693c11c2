// The catalog module's hooks into the platform: bootstrap sections, demo data and operator commands.
import { registerBootstrapSection } from './bootstrap';
import { applyCatalogSections, checkCatalogSections } from './catalog-bootstrap';
import { seedDemoCatalog } from './catalog-demo';
import { registerCatalogCommands } from './cli/catalog-commands';
import { registerDemoSeeder } from './demo';

export function registerCatalogModule(): void {
  registerBootstrapSection(applyCatalogSections, checkCatalogSections);
  registerDemoSeeder(seedDemoCatalog);
  registerCatalogCommands();
}
