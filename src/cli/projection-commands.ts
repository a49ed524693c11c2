// `projections status`: every projection's checkpoint against the head of the log, which version of
// each versioned projection serves, and the progress of a background rebuild (events/s, ETA).
// Scaled out it reads what the projector records in MongoDB; embedded, the read models live in the
// server's memory, so it reads the status file the server keeps in DATA_DIR.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE, serverHoldsDataDir } from '../data-dir-lock';
import { readProjectorState } from '../projection/follow';
import {
  PROJECTION_VERSIONS,
  type ProjectionStatus,
  VERSIONS_STATUS_FILE,
  type VersionDoc,
} from '../projection/versions';
import { boolFlag, type CliContext, registerCliCommand, rejectUnknownFlags } from './registry';

function describeBuild(p: ProjectionStatus, now: number): string {
  const b = p.building;
  if (!b) return 'serving';
  const head = b.head === null ? null : BigInt(b.head);
  const pos = BigInt(b.position);
  const pct = head && head > 0n ? `${Math.min(100, Number((pos * 1000n) / head) / 10)}%` : '?';
  const age = Math.round((now - Date.parse(b.updated_at)) / 1000);
  const eta = b.eta_s === null ? 'ETA unknown' : `ETA ${b.eta_s} s`;
  return `rebuilding v${b.version}: ${pct} (position ${b.position} of ${b.head ?? '?'}, ${b.events.toLocaleString('en')} events), ${b.events_per_s.toLocaleString('en')} events/s, ${eta} (reported ${age} s ago)`;
}

interface StatusReport {
  written_at: string;
  pid: number;
  /** Written by a graceful stop. */
  stopped_at?: string;
  projections: ProjectionStatus[];
}

/**
 * How the report's server ended, or null while it runs. DATA_DIR's lock says it when a server took one
 * (src/main.ts does; it works across PID namespaces, a CLI in another container): held, a server runs
 * (after a graceful stop, a new one still building its read models before it reports); free, none does.
 * Without a lock file (a server embedded in another program) the report's pid is asked instead.
 */
function reportEnded(report: StatusReport, dataDir: string): string | null {
  const locked = existsSync(join(dataDir, LOCK_FILE));
  const held = locked && serverHoldsDataDir(dataDir);
  if (report.stopped_at)
    return held
      ? `stopped at ${report.stopped_at} (a server holds DATA_DIR now: it reports once its read models are built)`
      : `stopped at ${report.stopped_at}`;
  if (locked) return held ? null : GONE;
  try {
    process.kill(report.pid, 0);
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? null : GONE;
  }
}

const GONE = 'is no longer running (it ended without stopping: a crash or a kill)';

/** The server's report, or null when the file holds none (empty, cut short, garbage). */
function readReport(file: string): StatusReport | null {
  try {
    const report = JSON.parse(readFileSync(file, 'utf8')) as StatusReport;
    return Array.isArray(report?.projections) ? report : null;
  } catch {
    return null;
  }
}

async function run(ctx: CliContext): Promise<void> {
  rejectUnknownFlags(ctx, ['json']);
  const json = boolFlag(ctx, 'json') === true;
  const { rt } = ctx;
  const now = Date.now();
  let versioned: ProjectionStatus[];
  let source: string;
  if (rt.config.store === 'embedded') {
    const file = join(rt.config.dataDir, VERSIONS_STATUS_FILE);
    const report = existsSync(file) ? readReport(file) : null;
    if (report) {
      versioned = report.projections;
      const ended = reportEnded(report, rt.config.dataDir);
      source =
        ended === null
          ? `as reported by the server (pid ${report.pid}) at ${report.written_at}; this process's own replay is below`
          : `as last reported at ${report.written_at} by a server (pid ${report.pid}) that ${ended}: what it was doing then, not now; this process's own replay is below`;
    } else if (existsSync(file)) {
      versioned = rt.versions.status();
      source = `${file} holds no readable report (cut short by a crash or a full disk: the server writes it again at its next start); the versions this code would run`;
    } else {
      versioned = rt.versions.status();
      source = 'no server has reported in this DATA_DIR: the versions this code would run';
    }
  } else {
    const docs = await rt.projections.docs
      .collection<VersionDoc>(PROJECTION_VERSIONS)
      .find({}, { sort: { _id: 1 } });
    versioned = docs.map((d) => ({
      name: d._id,
      active: d.active,
      versions: rt.versions.status().find((s) => s.name === d._id)?.versions ?? [d.active],
      collections: d.collections,
      switched_at: d.switched_at,
      building: d.building,
    }));
    source = 'as recorded in MongoDB by the projector';
  }
  // Scaled out: a projector stopped on a write the store refuses for good says where (src/projection/follow.ts).
  const halt = rt.config.store === 'embedded' ? null : await readProjectorState(rt.projections.docs);
  const stoppedAt = (name: string) =>
    halt && (halt.projection === name || halt.projection === null)
      ? `stopped: the projector stopped at ${halt.at} on event ${halt.event_type ?? '?'} ${halt.event_id ?? '?'} (position ${halt.position ?? '?'}) of ${halt.projection ?? 'a projection'}: ${halt.error}; fix it, then restart the projector`
      : null;
  const head = await rt.events.headPosition();
  const rows = [];
  for (const p of rt.projections.projections) {
    const checkpoint = await rt.projections.docs.getCheckpoint(p.name);
    const v = versioned.find((s) => s.name === p.name);
    rows.push({
      projection: p.name,
      checkpoint: checkpoint?.toString() ?? null,
      head: head?.toString() ?? null,
      active_version: v?.active ?? null,
      versions_in_code: v?.versions ?? null,
      collections: v?.collections ?? null,
      switched_at: v?.switched_at ?? null,
      building: v?.building ?? null,
      state: stoppedAt(p.name) ?? (v ? describeBuild(v, now) : 'serving (not versioned)'),
    });
  }
  if (json) {
    for (const r of rows) ctx.out(JSON.stringify(r));
    return;
  }
  // Names padded to the longest (analytics_missed_calls is 22 characters), so the columns line up.
  const width = Math.max(20, ...rows.map((r) => r.projection.length), ...versioned.map((v) => v.name.length));
  if (halt)
    ctx.out(
      `PROJECTOR STOPPED at ${halt.at}: ${halt.projection ?? 'a projection'} could not apply ${halt.event_type ?? 'an event'} ${halt.event_id ?? '?'} at position ${halt.position ?? '?'} (${halt.error}); the store refuses it for good. Fix it, then restart the projector.`,
    );
  ctx.out(`versions ${source}`);
  for (const v of versioned)
    ctx.out(
      `  ${v.name.padEnd(width)} v${v.active} active (versions in code: ${v.versions.join(', ')})  ${describeBuild(v, now)}`,
    );
  ctx.out(`checkpoints (head of the log: ${head ?? 'empty'})`);
  for (const r of rows)
    ctx.out(`  ${r.projection.padEnd(width)} ${String(r.checkpoint ?? '-').padStart(12)}`);
}

export function registerProjectionCommands(): void {
  registerCliCommand({
    name: 'projections status',
    summary:
      'Checkpoints, active versions and background rebuilds (progress, events/s, ETA) of the read models',
    usage: '[--json]',
    run,
  });
}
