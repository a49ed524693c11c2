// `catalog apply` and `catalog show`: an operator edits a restaurant's catalog as one JSON document.
// `show` prints exactly what `apply` reads, so the round trip show → edit → apply is the workflow.
import { readFileSync } from 'node:fs';
import type { CatalogConfig } from '../../commands/catalog/decide';
import { applyCatalog, loadCatalog } from '../../commands/catalog/handler';
import { CATALOG_KINDS, type CatalogKind } from '../../commands/catalog/types';
import { loadRestaurant, updateRestaurant } from '../../commands/restaurants/handler';
import { operatorMeta } from '../core/command-meta';
import { parseJsonDocument } from '../http/body-guard';
import { boolFlag, CliUsageError, optionalFlag, registerCliCommand } from './registry';
import { restaurantFlag } from './restaurant-flag';

const meta = operatorMeta('cli');

/** The file: any subset of the catalog sections, plus the restaurant's `features`. */
export function readCatalogFile(path: string): { config: CatalogConfig; features?: string[] } {
  let raw: unknown;
  try {
    raw = parseJsonDocument(readFileSync(path, 'utf8'));
  } catch (err) {
    const why = (err as Error).message;
    throw new CliUsageError(
      err instanceof SyntaxError || (err as NodeJS.ErrnoException).code
        ? `${path} is not readable JSON: ${why}`
        : `${path} cannot be applied: ${why}`,
    );
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new CliUsageError(`${path} must hold a JSON object of catalog sections`);
  const config: CatalogConfig = {};
  let features: string[] | undefined;
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'features') {
      if (!Array.isArray(value) || value.some((f) => typeof f !== 'string'))
        throw new CliUsageError('features must be an array of strings');
      features = value;
    } else if ((CATALOG_KINDS as readonly string[]).includes(key)) {
      if (!Array.isArray(value)) throw new CliUsageError(`${key} must be an array`);
      config[key as CatalogKind] = value;
    } else if (key !== 'restaurant_id')
      throw new CliUsageError(`unknown section ${key}; known: ${[...CATALOG_KINDS, 'features'].join(', ')}`);
  }
  return { config, ...(features ? { features } : {}) };
}

export function registerCatalogCommands(): void {
  registerCliCommand({
    name: 'catalog apply',
    summary:
      'Set a restaurant catalog from a JSON file (a section given replaces that whole list). --merge keeps the items the file leaves out, but replaces each item it gives whole: a field the item omits takes its default, not its stored value ({"id":"tbl_1","max_pax":3} resets the table\'s name and room), so give every field of an item you change',
    usage: '--restaurant rest_x [--merge] <catalog.json>',
    // A switch: in the usage's order the file after --merge stays the positional path.
    switches: ['merge'],
    flags: ['restaurant', 'merge'],
    async run(ctx) {
      const restaurantId = await restaurantFlag(ctx);
      const file = ctx.positionals[0];
      if (!file) throw new CliUsageError('give the catalog file path');
      const { config, features } = readCatalogFile(file);
      const out = await applyCatalog(
        ctx.rt,
        restaurantId,
        config,
        meta,
        boolFlag(ctx, 'merge') ? 'merge' : 'replace',
      );
      let position = out.position;
      let changes = out.appended.length;
      if (features) {
        const updated = await updateRestaurant(ctx.rt, restaurantId, { features }, meta);
        position = updated.position ?? position;
        changes += updated.appended.length;
      }
      await ctx.rt.settle(position);
      ctx.out(
        changes ? `${changes} change(s) applied to ${restaurantId}` : `catalog of ${restaurantId} unchanged`,
      );
    },
  });
  registerCliCommand({
    name: 'catalog show',
    summary: 'Print a restaurant catalog as JSON (the format catalog apply reads)',
    usage: '--restaurant rest_x [--section tables]',
    flags: ['restaurant', 'section'],
    async run(ctx) {
      const restaurantId = await restaurantFlag(ctx);
      const restaurant = await loadRestaurant(ctx.rt, restaurantId);
      const catalog = await loadCatalog(ctx.rt, restaurantId);
      const section = optionalFlag(ctx, 'section');
      if (section !== undefined) {
        if (!(CATALOG_KINDS as readonly string[]).includes(section))
          throw new CliUsageError(`--section is one of ${CATALOG_KINDS.join(', ')}`);
        ctx.out(JSON.stringify({ [section]: catalog[section as CatalogKind] }, null, 2));
        return;
      }
      const { restaurant_id: _r, ...sections } = catalog;
      ctx.out(JSON.stringify({ ...sections, features: restaurant.profile?.features ?? [] }, null, 2));
    },
  });
}
