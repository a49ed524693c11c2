// "Adding or changing a projection never stops the API": a server started on a store with history
// (3,000 reservations made by the create handler, ~9,000 events) keeps answering creates and reads while a new version
// of two projections (`reservations`, which GET /reservations reads, and `analytics`) rebuilds in the
// background; every request succeeds, reads stay consistent (each acknowledged create reads back, the
// figures never go back), and both versions take over once caught up. Latencies are printed, not
// asserted (the machine is shared).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { dayAfter, FILL_RESTAURANT, FILL_TOKEN, fill, fillCreate } from '../../bench/fill';
import { ANALYTICS_DAYS, analyticsProjection } from '../../projections/analytics/projection';
import { RESERVATIONS, reservationsProjection } from '../../projections/reservations';
import { PROJECTION_VERSIONS, VERSIONS_STATUS_FILE, type VersionDoc } from '../../src/projection/versions';
import { startTestService, type TestService } from '../helpers/service';

const FIRST_DAY = '2031-01-01';
const HISTORY_DAYS = 30;
const PER_DAY = 100;
const CLIENTS = 6;
/** The version of `reservations` deployed here: the one after the served one. */
const NEXT = (reservationsProjection.version ?? 1) + 1;
const NEXT_ANALYTICS = (analyticsProjection.version ?? 1) + 1;

const t = suite<{ svc: TestService; dir: string }>('projection versions under load');
t.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'couvert-versions-e2e-'));
  const days = Array.from({ length: HISTORY_DAYS }, (_, i) => ({
    day: dayAfter(FIRST_DAY, i),
    count: PER_DAY,
  }));
  assert.is(await fill(ctx.dir, { days }), HISTORY_DAYS * PER_DAY);
  ctx.svc = await startTestService({ dataDir: ctx.dir, env: { RATE_LIMIT_PER_MINUTE: '10000000' } });
});
t.after(async ({ svc, dir }) => {
  await svc?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function analyticsTotal(svc: TestService): Promise<number> {
  const days = await svc.rt.docs.collection(ANALYTICS_DAYS).find({ restaurant_id: FILL_RESTAURANT });
  return days.reduce((n, d) => n + (d.reservations as number), 0);
}

const pct = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number) : 0;
};

t(
  'the next version of reservations and analytics rebuilds under load and take over; no request fails',
  async ({ svc }) => {
    const token = FILL_TOKEN;
    let acknowledged = HISTORY_DAYS * PER_DAY;
    type Phase = 'before' | 'building' | 'after';
    let phase = 'before' as Phase;
    const latency: Record<Phase, number[]> = { before: [], building: [], after: [] };
    const failures: string[] = [];
    let lastFigures = 0;
    let stop = false;
    let k = 0;
    const newDay = dayAfter(FIRST_DAY, HISTORY_DAYS + 5);
    const timed = async <T>(f: () => Promise<T>): Promise<T> => {
      const p = phase;
      const start = performance.now();
      const out = await f();
      latency[p].push(performance.now() - start);
      return out;
    };
    const client = async (c: number) => {
      while (!stop) {
        const n = k++;
        const body = fillCreate(dayAfter(newDay, n % 5), Math.floor(n / 5), `load-${c}-${n}`);
        const created = await timed(() => svc.api('POST', '/reservations', { token, body }));
        if (created.status !== 201) {
          failures.push(`create ${created.status} ${created.text.slice(0, 200)}`);
          continue;
        }
        acknowledged++;
        const seenBefore = acknowledged;
        const id = created.body.data.id as string;
        const read = await timed(() => svc.api('GET', `/reservations/${id}`, { token }));
        if (read.status !== 200 || read.body.data.id !== id) failures.push(`read ${id}: ${read.status}`);
        // An older reservation, from the history, through the list route's external_id filter.
        const old = `fill-${dayAfter(FIRST_DAY, n % HISTORY_DAYS)}-${n % PER_DAY}`;
        const list = await timed(() => svc.api('GET', `/reservations?external_id=${old}`, { token }));
        if (list.status !== 200 || list.body.data.length !== 1)
          failures.push(`list ${old}: ${list.status} ${list.text.slice(0, 100)}`);
        const figures = await analyticsTotal(svc);
        if (figures < seenBefore - CLIENTS)
          failures.push(`analytics ${figures} < acknowledged ${seenBefore}`);
        if (figures < lastFigures) failures.push(`analytics went back: ${figures} < ${lastFigures}`);
        lastFigures = Math.max(lastFigures, figures);
      }
    };
    // Warm-up (the OpenAPI checker compiles the document on first use).
    await svc.api('GET', `/reservations?external_id=fill-${FIRST_DAY}-0`, { token });
    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    await new Promise((r) => setTimeout(r, 1500));
    phase = 'building';
    const started = performance.now();
    await Promise.all([
      svc.rt.versions.deploy({ ...reservationsProjection, version: NEXT }),
      svc.rt.versions.deploy({ ...analyticsProjection, version: NEXT_ANALYTICS }),
    ]);
    const buildSeconds = (performance.now() - started) / 1000;
    phase = 'after';
    await new Promise((r) => setTimeout(r, 1500));
    stop = true;
    await Promise.all(clients);

    console.log(
      `  rebuild of 2 projections over the log took ${buildSeconds.toFixed(1)} s; requests: ` +
        (['before', 'building', 'after'] as const)
          .map(
            (p) =>
              `${p} ${latency[p].length} (p50 ${pct(latency[p], 0.5).toFixed(1)} ms, p99 ${pct(latency[p], 0.99).toFixed(1)} ms, max ${Math.max(0, ...latency[p]).toFixed(1)} ms)`,
          )
          .join('; '),
    );
    assert.equal(failures, [], 'every request succeeded and read consistently');
    assert.ok(latency.building.length > 0, 'requests were answered during the rebuild');
    assert.is(svc.rt.versions.aliased.resolve(RESERVATIONS), `reservations_v${NEXT}`);
    assert.is(svc.rt.versions.aliased.resolve(ANALYTICS_DAYS), `analytics_days_v${NEXT_ANALYTICS}`);
    for (const [name, version] of [
      ['reservations', NEXT],
      ['analytics', NEXT_ANALYTICS],
    ] as const) {
      const doc = await svc.rt.projections.docs
        .collection<VersionDoc>(PROJECTION_VERSIONS)
        .findOne({ _id: name });
      assert.is(doc?.active, version, name);
    }
    // What is served now is complete: every reservation of the log, in both read models.
    const total = await svc.rt.docs.collection(RESERVATIONS).count({ restaurant_id: FILL_RESTAURANT });
    assert.is(total, acknowledged);
    assert.is(await analyticsTotal(svc), acknowledged);
    const status = JSON.parse(readFileSync(join(svc.dataDir, VERSIONS_STATUS_FILE), 'utf8'));
    assert.equal(
      status.projections
        .filter((p: { name: string }) => p.name === 'reservations' || p.name === 'analytics')
        .map((p: { name: string; active: number }) => [p.name, p.active]),
      [
        ['reservations', NEXT],
        ['analytics', NEXT_ANALYTICS],
      ],
    );
  },
);

t.run();
