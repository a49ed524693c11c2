// `catalog apply` and `catalog show` against a real runtime (SQLite log, embedded read models).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRestaurant } from '../../commands/restaurants/handler';
import { registerAllCliCommands } from '../../src/cli/commands';
import { CliUsageError, cliCommands, parseFlags } from '../../src/cli/registry';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { ApiError } from '../../src/core/errors';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { runCli as run } from '../helpers/cli-in-process';

const t = suite<{ rt: Runtime; dir: string }>('catalog CLI');

t.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-catalog-cli-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
  await createRestaurant(
    ctx.rt,
    'rest_cli',
    {
      name: 'CLI',
      slug: 'cli',
      country_code: 'FR',
      timezone: 'Europe/Paris',
      currency: 'EUR',
      api_option: false,
      customer_matching: true,
      features: [],
    },
    operatorMeta('test'),
  );
});
t.after(async (ctx) => {
  await ctx.rt.close();
  rmSync(ctx.dir, { recursive: true, force: true });
});

t('apply then show round-trips; applying again changes nothing', async ({ rt, dir }) => {
  const file = join(dir, 'catalog.json');
  writeFileSync(
    file,
    JSON.stringify({
      rooms: [{ id: 'room_main', name: 'Main' }],
      tables: [{ id: 'tbl_1', room_id: 'room_main', max_pax: 4 }],
      features: ['MISSED_CALLS'],
    }),
  );
  assert.equal(await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [file]), [
    '3 change(s) applied to rest_cli',
  ]);
  assert.equal(await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [file]), [
    'catalog of rest_cli unchanged',
  ]);
  const shown = JSON.parse((await run(rt, 'catalog show', { restaurant: 'rest_cli' })).join('\n'));
  assert.equal(shown.tables, [{ id: 'tbl_1', name: 'tbl_1', room_id: 'room_main', min_pax: 1, max_pax: 4 }]);
  assert.equal(shown.features, ['MISSED_CALLS']);
  writeFileSync(file, JSON.stringify(shown));
  assert.equal(await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [file]), [
    'catalog of rest_cli unchanged',
  ]);
  const section = JSON.parse(
    (await run(rt, 'catalog show', { restaurant: 'rest_cli', section: 'rooms' })).join('\n'),
  );
  assert.equal(section, { rooms: [{ id: 'room_main', name: 'Main' }] });
});

t('--merge adds without removing; a replace removes what the section leaves out', async ({ rt, dir }) => {
  const file = join(dir, 'more.json');
  writeFileSync(file, JSON.stringify({ tables: [{ id: 'tbl_2', room_id: 'room_main', max_pax: 2 }] }));
  await run(rt, 'catalog apply', { restaurant: 'rest_cli', merge: true }, [file]);
  let shown = JSON.parse((await run(rt, 'catalog show', { restaurant: 'rest_cli' })).join('\n'));
  assert.equal(
    shown.tables.map((x: { id: string }) => x.id),
    ['tbl_1', 'tbl_2'],
  );
  await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [file]);
  shown = JSON.parse((await run(rt, 'catalog show', { restaurant: 'rest_cli' })).join('\n'));
  assert.equal(
    shown.tables.map((x: { id: string }) => x.id),
    ['tbl_2'],
  );
});

t(
  '--merge replaces an item given whole (its omitted fields take their defaults), and the help says so',
  async ({ rt, dir }) => {
    const file = join(dir, 'merge-whole.json');
    writeFileSync(
      file,
      JSON.stringify({ tables: [{ id: 'tbl_2', name: 'Window', room_id: 'room_main', max_pax: 2 }] }),
    );
    await run(rt, 'catalog apply', { restaurant: 'rest_cli', merge: true }, [file]);
    writeFileSync(file, JSON.stringify({ tables: [{ id: 'tbl_2', max_pax: 3 }] }));
    await run(rt, 'catalog apply', { restaurant: 'rest_cli', merge: true }, [file]);
    const shown = JSON.parse((await run(rt, 'catalog show', { restaurant: 'rest_cli' })).join('\n'));
    const table = shown.tables.find((x: { id: string }) => x.id === 'tbl_2');
    assert.equal([table.name, table.room_id, table.max_pax], ['tbl_2', null, 3]);
    registerModules();
    registerAllCliCommands();
    const summary = cliCommands().find((c) => c.name === 'catalog apply')?.summary ?? '';
    assert.match(
      summary,
      /--merge keeps the items the file leaves out, but replaces each item it gives whole/,
    );
    assert.match(summary, /resets the table's name and room/);
  },
);

t('the usage order parses: the file after --merge is the path, not the value of --merge', () => {
  registerModules();
  registerAllCliCommands();
  const command = cliCommands().find((c) => c.name === 'catalog apply');
  assert.ok(command);
  assert.equal(parseFlags(['--restaurant', 'rest_cli', '--merge', 'catalog.json'], command.switches), {
    values: { restaurant: 'rest_cli', merge: true },
    positionals: ['catalog.json'],
  });
});

t('usage errors and invalid items are reported, nothing is applied', async ({ rt, dir }) => {
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ tabels: [] }));
  const usage = await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [bad]).catch((e: unknown) => e);
  assert.instance(usage, CliUsageError);
  assert.match((usage as Error).message, /unknown section tabels/);
  writeFileSync(bad, JSON.stringify({ tables: [{ id: 'tbl_3', room_id: 'nowhere', max_pax: 2 }] }));
  const invalid = await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [bad]).catch((e: unknown) => e);
  assert.instance(invalid, ApiError);
  assert.equal(
    (((invalid as ApiError).details?.issues ?? []) as { path: string }[]).map((i) => i.path),
    ['tables.0.room_id'],
  );
  const missing = await run(rt, 'catalog show', { restaurant: 'rest_nope' }).catch((e: unknown) => e);
  assert.is((missing as ApiError).status, 404);
  const noFlag = await run(rt, 'catalog show', {}).catch((e: unknown) => e);
  assert.instance(noFlag, CliUsageError);
});

t(
  'a file that gives a name twice in one object, a prototype key or nests past 32 levels is refused, nothing applied',
  async ({ rt, dir }) => {
    const file = join(dir, 'twice.json');
    const before = await run(rt, 'catalog show', { restaurant: 'rest_cli', section: 'tables' });
    const cases: [string, RegExp][] = [
      // JSON.parse kept the last value: a table of 20 seats applied where the file also said 2.
      [
        '{"tables":[{"id":"tbl_twice","name":"T","room_id":null,"min_pax":1,"max_pax":2,"max_pax":20}]}',
        /tables\.0\.max_pax is given more than once/,
      ],
      [
        '{"tables":[],"tables":[{"id":"tbl_twice","name":"T"}]}',
        /^\S+ cannot be applied: tables is given more than once/,
      ],
      ['{"__proto__":{"x":1},"tables":[]}', /__proto__ is not allowed/],
      [`{"rooms":${'['.repeat(40)}${']'.repeat(40)}}`, /nests deeper than 32 levels/],
    ];
    for (const [text, why] of cases) {
      writeFileSync(file, text);
      const refused = await run(rt, 'catalog apply', { restaurant: 'rest_cli' }, [file]).catch(
        (e: unknown) => e,
      );
      assert.instance(refused, CliUsageError, text.slice(0, 80));
      assert.match((refused as Error).message, why, text.slice(0, 80));
    }
    assert.equal(await run(rt, 'catalog show', { restaurant: 'rest_cli', section: 'tables' }), before);
  },
);

t.run();
