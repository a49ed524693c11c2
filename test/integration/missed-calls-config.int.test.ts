// A restaurant's missed-call configuration: the bootstrap file's `whatsapp_phone_number_id`,
// `booking_url` and template `name`/`language`, applied twice without change, refused whole when
// faulty; and the operator's `missed-calls configure`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadCatalog } from '../../commands/catalog/handler';
import { loadSettings } from '../../commands/missed-calls/settings';
import { applyBootstrap, type BootstrapFile } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { operatorMeta } from '../../src/core/command-meta';
import { createLogger } from '../../src/logger';
import { registerModules } from '../../src/modules';
import { createRuntime, type Runtime } from '../../src/runtime';
import { runCli as cli } from '../helpers/cli-in-process';
import { missedCallBootstrap, TEMPLATES } from '../helpers/missed-calls';

const t = suite<{ rt: Runtime; dir: string }>('missed-call configuration');
t.before(async (ctx) => {
  registerModules();
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-mc-config-'));
  ctx.rt = await createRuntime(loadConfig({ DATA_DIR: ctx.dir, LOG_LEVEL: 'silent' }), {
    logger: createLogger('silent'),
  });
});
t.after(async ({ rt, dir }) => {
  await rt.close();
  rmSync(dir, { recursive: true, force: true });
});

const meta = operatorMeta('test');

t(
  'the bootstrap file sets the settings and template names and languages; a second application appends nothing',
  async ({ rt }) => {
    const file = missedCallBootstrap({
      message_templates: [{ ...TEMPLATES[0], language: 'fr' }, TEMPLATES[1]],
      follow_up_max_age_hours: 12,
    }) as BootstrapFile;
    const first = await applyBootstrap(rt, file, meta);
    assert.ok(
      first.notes.some((n) => n.startsWith('missed-call settings:')),
      first.notes.join('\n'),
    );
    assert.equal(await loadSettings(rt, 'rest_demo'), {
      whatsapp_phone_number_id: '106540352242922',
      booking_url: 'https://le-demo.example/book',
      follow_up_max_age_hours: 12,
    });
    // A restaurant the file gives no limit keeps the default, 24 hours.
    assert.is((await loadSettings(rt, 'rest_other')).follow_up_max_age_hours, 24);
    const templates = (await loadCatalog(rt, 'rest_demo')).message_templates;
    assert.equal(
      templates.map((m) => [m.id, m.name, m.language]),
      [
        ['tpl_missed', 'missed_call_fr', 'fr'],
        ['tpl_booked', 'tpl_booked', null],
      ],
    );
    const again = await applyBootstrap(rt, file, meta);
    assert.is(again.appended, 0);
  },
);

t('a faulty file changes nothing and names each fault by its path', async ({ rt }) => {
  const head = await rt.events.headPosition();
  const bad = missedCallBootstrap({
    whatsapp_phone_number_id: 'not-a-number',
    booking_url: 'ftp://x',
  }) as BootstrapFile;
  const err = await applyBootstrap(rt, bad, meta).catch((e: Error) => e);
  assert.instance(err, Error);
  assert.match((err as Error).message, 'restaurants.0.whatsapp_phone_number_id');
  assert.match((err as Error).message, 'restaurants.0.booking_url');
  const fault = async (template: Record<string, unknown>) =>
    (
      (await applyBootstrap(
        rt,
        missedCallBootstrap({ message_templates: [template] }) as BootstrapFile,
        meta,
      ).catch((e: Error) => e)) as Error
    ).message;
  const body = await fault({ ...TEMPLATES[0], body: 'Hi {{nickname}} on {{reservation_date}}' });
  assert.match(body, 'restaurants.0.message_templates.0.body: {{nickname}} is not a placeholder');
  assert.match(body, 'MISSED_CALL template has no reservation');
  assert.match(
    await fault({ ...TEMPLATES[0], language: 'French' }),
    'restaurants.0.message_templates.0.language',
  );
  assert.match(
    await fault({ ...TEMPLATES[0], name: 'Missed Call' }),
    'restaurants.0.message_templates.0.name',
  );
  // Only restaurants before the faulty section may have been written; nothing of the settings changed.
  const tooLong = await applyBootstrap(
    rt,
    missedCallBootstrap({ follow_up_max_age_hours: 500 }) as BootstrapFile,
    meta,
  ).catch((e: Error) => e);
  assert.match((tooLong as Error).message, 'restaurants.0.follow_up_max_age_hours');
  assert.equal(await loadSettings(rt, 'rest_demo'), {
    whatsapp_phone_number_id: '106540352242922',
    booking_url: 'https://le-demo.example/book',
    follow_up_max_age_hours: 12,
  });
  assert.ok(head !== null);
});

t(
  'missed-calls configure: prints, sets, clears with none, refuses a bad value by its flag',
  async ({ rt }) => {
    const shown = JSON.parse(
      (await cli(rt, 'missed-calls configure', { restaurant: 'rest_demo' })).join('\n'),
    );
    assert.is(shown.booking_url, 'https://le-demo.example/book');
    assert.equal(
      await cli(rt, 'missed-calls configure', { restaurant: 'rest_demo', 'booking-url': 'none' }),
      ['missed-call settings of rest_demo updated'],
    );
    assert.equal(
      await cli(rt, 'missed-calls configure', { restaurant: 'rest_demo', 'booking-url': 'none' }),
      ['missed-call settings of rest_demo unchanged'],
    );
    assert.is((await loadSettings(rt, 'rest_demo')).booking_url, null);
    const refused = await cli(rt, 'missed-calls configure', {
      restaurant: 'rest_demo',
      'whatsapp-phone-number-id': 'abc',
    }).catch((e: Error) => e);
    assert.match((refused as Error).message, '--whatsapp-phone-number-id');
    const unknown = await cli(rt, 'missed-calls configure', { restaurant: 'rest_nope' }).catch(
      (e: Error) => e,
    );
    assert.match((unknown as Error).message, 'rest_nope not found');
  },
);

t.run();
