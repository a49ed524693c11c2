// Starts the service in-process: runtime, bootstrap or demo data, HTTP server. Used by main.ts and by
// end-to-end tests (ephemeral port).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { applyBootstrap, readBootstrapFile } from './bootstrap';
import type { Config } from './config';
import { operatorMeta } from './core/command-meta';
import { ApiError } from './core/errors';
import { stopImports } from './customer-import/engine';
import { type DemoInfo, demoBelongsHere, ensureDemo } from './demo';
import { clientErrorHandler } from './http/client-error';
import { allRoutes } from './http/routes/index';
import { createApp, type Lifecycle, newLifecycle } from './http/server';
import { registerModules } from './modules';
import { followForever } from './projection/follow';
import { VERSIONS_STATUS_FILE } from './projection/versions';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime';
import { checkScheduledJobs, startScheduler } from './scheduler';
import { type PublisherOptions, STOP_GRACE_MS } from './webhooks/publisher';
import { type RunningWebhooks, startWebhooks } from './webhooks/runner';

export interface RunningService {
  rt: Runtime;
  server: Server;
  url: string;
  demo: DemoInfo | null;
  notes: string[];
  /** The webhook publisher, when this process runs the webhooks role. */
  webhooks: RunningWebhooks | null;
  stop(): Promise<void>;
}

/** How long a stop waits for in-flight requests before cutting their connections (Docker's stop grace is 10 s). */
export const SHUTDOWN_GRACE_MS = 8_000;

export async function startService(
  config: Config,
  options: RuntimeOptions & { demo?: boolean; shutdownGraceMs?: number; webhooks?: PublisherOptions } = {},
): Promise<RunningService> {
  registerModules();
  // The scheduled jobs' settings (NO_SHOW_GRACE_MINUTES…) are checked before anything is opened or
  // written, like every other variable: not after the demo data, once the scheduler starts.
  if (config.roles.has('scheduler')) checkScheduledJobs();
  const rt = await createRuntime(config, options);
  // The API derives the feeds' cursor keys from the secrets key (commands/customers/cursor-key.ts):
  // loaded (embedded: created) now, so a read never has to write it, on a full disk or at all.
  if (config.roles.has('api'))
    try {
      rt.secrets.load();
    } catch (err) {
      await rt.close();
      throw err;
    }
  const notes: string[] = [];
  let demo: DemoInfo | null = null;
  // Requests that arrive before the bootstrap or demo data is in wait for it (see `lifecycle.ready`).
  let open!: () => void;
  let fail!: (err: Error) => void;
  const lifecycle: Lifecycle = {
    ...newLifecycle(),
    ready: new Promise<void>((resolve, reject) => {
      open = resolve;
      fail = reject;
    }),
    isReady: false,
  };
  lifecycle.ready.catch(() => {}); // a failed start is answered by the requests that wait, if any
  const app = createApp(rt, allRoutes(rt), lifecycle);
  const server = createServer(app.callback());
  // Longer than clients' and load balancers' idle timeouts, so the server is never the side that races a reused connection.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // Answers the requests Node's HTTP parser refuses (oversized headers, malformed lines) in the envelope.
  server.on('clientError', clientErrorHandler(rt));
  server.listen(config.port, config.host);
  try {
    // Listen first: a port in use fails the start before anything is written (a demo key created but
    // never printed would be lost: it is stored hashed).
    await new Promise<void>((resolve, reject) => {
      server.once('listening', resolve);
      server.once('error', reject);
    });
    if (config.bootstrapFile) {
      const report = await applyBootstrap(
        rt,
        readBootstrapFile(config.bootstrapFile),
        operatorMeta('bootstrap'),
      );
      await rt.settle(report.position);
      notes.push(`bootstrap ${config.bootstrapFile}: ${report.appended} event(s) appended`, ...report.notes);
    } else if (options.demo !== false && config.roles.has('api') && (await demoBelongsHere(rt))) {
      // Scaled out the key is not made here: it would be printed into container logs. The CLI makes one.
      demo = await ensureDemo(rt, { withKey: config.store === 'embedded' });
    }
  } catch (err) {
    // Requests waiting for the data answer 500 INTERNAL_ERROR (the documented status for "the server
    // failed"), then every connection is closed.
    fail(new ApiError(500, 'INTERNAL_ERROR', 'The service could not start; retry later'));
    if (server.listening) await drain(server, lifecycle, 1_000);
    await rt.close();
    throw err;
  }
  lifecycle.isReady = true;
  open();
  // Scaled out, the projector role follows the log live; embedded, projections apply inline.
  const following =
    config.store !== 'embedded' && config.roles.has('projector')
      ? followForever(rt.projections, { logger: rt.logger, clock: rt.clock })
      : null;
  // --- projection versions (src/projection/versions.ts): a newer version in the code is rebuilt in the
  // background by the process that applies projections (embedded, or the projector role) and takes over
  // when caught up; API-only processes follow the switch. ---
  if (config.store === 'embedded') rt.versions.reportTo(join(config.dataDir, VERSIONS_STATUS_FILE));
  if (config.store === 'embedded' || config.roles.has('projector')) rt.versions.startPendingBuilds();
  else rt.versions.followSwitches();
  // --- end projection versions ---
  // --- scheduler role (src/scheduler.ts): time-driven commands; stopped before the stores close. ---
  const scheduler = config.roles.has('scheduler') ? startScheduler(rt) : null;
  // --- end scheduler role ---
  // --- webhooks role (src/webhooks/runner.ts): the publisher follows the log; stopped before the stores close. ---
  const webhooks = config.roles.has('webhooks') ? startWebhooks(rt, options.webhooks) : null;
  const address = server.address() as AddressInfo;
  const url = config.port === 0 ? `http://${config.host}:${address.port}` : config.baseUrl;
  if (config.port === 0) rt.config.baseUrl = url;
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      const began = performance.now();
      let drained: Drained = { inFlightAtStop: lifecycle.inFlight, cutAtGrace: false, handlersUnfinished: 0 };
      // Customer imports running here write no further rows, record those in flight and fail as
      // interrupted (their pages offer to finish them), while the requests drain: before the stores close.
      const imports = stopImports(rt.events);
      // Outbound calls still waiting for an answer a moment after the stop began (a test delivery in a
      // request, the publisher's attempts) are cut and report it, rather than holding the stop up to
      // their 12 s timeout (and a test delivery's request past the drain, its record then lost).
      const cut = setTimeout(() => rt.stopping.abort(), OUTBOUND_STOP_GRACE_MS);
      try {
        drained = await drain(server, lifecycle, options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS);
        await scheduler?.stop();
        await webhooks?.stop();
      } finally {
        clearTimeout(cut);
      }
      await imports;
      // And those a request in flight began during the drain (stopped as they began: stopImports).
      await stopImports(rt.events);
      await rt.close();
      await following;
      // The stop's last line, in the log like the others (the signal's own line is plain text on
      // stdout): an orchestrator's log then shows the stop completed, how long it took and whether
      // requests in flight were answered or cut at the grace period.
      rt.logger.info(
        {
          duration_ms: Math.round(performance.now() - began),
          in_flight_at_stop: drained.inFlightAtStop,
          cut_at_grace: drained.cutAtGrace,
          handlers_unfinished: drained.handlersUnfinished,
        },
        'stopped',
      );
    })();
    return stopping;
  };
  return { rt, server, url, demo, notes, webhooks, stop };
}

/** How long outbound calls in flight may still take once a stop begins: the publisher's own grace. */
const OUTBOUND_STOP_GRACE_MS = STOP_GRACE_MS;

/** After connections are cut, how long handlers still running may take before the stores close under them. */
const HANDLER_GRACE_MS = 2_000;

/**
 * Stops accepting, lets in-flight requests finish, and closes every connection: from now on each
 * response says `Connection: close`, idle keep-alive connections are closed as they appear (a pooled
 * client or load balancer would otherwise hold the stop for the whole keep-alive timeout), and whatever
 * is still open after `graceMs` is cut. Then waits (bounded) for handlers whose connection was cut.
 */
interface Drained {
  /** Requests being handled when the stop began. */
  inFlightAtStop: number;
  /** Connections still open at the grace period were cut (their requests got no answer). */
  cutAtGrace: boolean;
  /** Handlers still running when the stores closed (after the cut and HANDLER_GRACE_MS). */
  handlersUnfinished: number;
}

async function drain(server: Server, lifecycle: Lifecycle, graceMs: number): Promise<Drained> {
  const inFlightAtStop = lifecycle.inFlight;
  let cutAtGrace = false;
  lifecycle.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => {
    cutAtGrace = true;
    server.closeAllConnections();
  }, graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
  if (lifecycle.inFlight > 0)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, HANDLER_GRACE_MS);
      lifecycle.onIdle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  return { inFlightAtStop, cutAtGrace, handlersUnfinished: lifecycle.inFlight };
}
