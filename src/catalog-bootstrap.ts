// The bootstrap file's catalog sections (rooms, tables, shifts, prescribers, discounts,
// customer_fields, message_templates of each restaurant entry). A section given replaces that list;
// a section left out is untouched. Every restaurant's sections are validated before any is applied,
// so a faulty file changes no catalog, and each error names its path in the file.
import { type CatalogConfig, decideApplyCatalog } from '../commands/catalog/decide';
import { applyCatalog, loadCatalog } from '../commands/catalog/handler';
import { CATALOG_KINDS } from '../commands/catalog/types';
import type { BootstrapRestaurant, SectionApplier, SectionCheck } from './bootstrap';
import { ApiError, type Issue } from './core/errors';

export function catalogConfigOf(r: BootstrapRestaurant): CatalogConfig {
  const config: CatalogConfig = {};
  for (const kind of CATALOG_KINDS) if (r[kind] !== undefined) config[kind] = r[kind];
  return config;
}

/** Throws naming every invalid item's path in the file; appends nothing. */
export const checkCatalogSections: SectionCheck = async (deps, file) => {
  const restaurants = file.restaurants ?? [];
  const at = deps.clock.now().toISOString();
  const issues: Issue[] = [];
  for (const [i, r] of restaurants.entries()) {
    try {
      decideApplyCatalog(await loadCatalog(deps, r.id), r.id, catalogConfigOf(r), 'replace', at);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      for (const issue of (err.details?.issues as Issue[] | undefined) ?? [])
        issues.push({ ...issue, path: `restaurants.${i}.${issue.path}` });
    }
  }
  if (issues.length)
    throw new Error(
      `the bootstrap file's catalog is invalid:\n${issues.map((x) => `  - ${x.path}: ${x.message}`).join('\n')}`,
    );
};

export const applyCatalogSections: SectionApplier = async (deps, file, meta) => {
  const restaurants = file.restaurants ?? [];
  await checkCatalogSections(deps, file);
  let changed = 0;
  for (const r of restaurants)
    changed += (await applyCatalog(deps, r.id, catalogConfigOf(r), meta, 'replace')).appended.length;
  return { notes: changed ? [`catalog: ${changed} item change(s)`] : [] };
};
