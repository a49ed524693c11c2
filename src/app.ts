// Starts the service in-process: runtime, bootstrap or demo data, HTTP server. Used by main.ts and by
// end-to-end tests (ephemeral port).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { applyBootstrap, readBootstrapFile } from './bootstrap';
import type { Config } from './config';
import { operatorMeta } from './core/command-meta';
import { type DemoInfo, ensureDemo } from './demo';
import { allRoutes } from './http/routes/index';
import { createApp } from './http/server';
import { registerModules } from './modules';
import { createRuntime, type Runtime, type RuntimeOptions } from './runtime';
import { startScheduler } from './scheduler';

export interface RunningService {
  rt: Runtime;
  server: Server;
  url: string;
  demo: DemoInfo | null;
  notes: string[];
  stop(): Promise<void>;
}

export async function startService(
  config: Config,
  options: RuntimeOptions & { demo?: boolean } = {},
): Promise<RunningService> {
  registerModules();
  const rt = await createRuntime(config, options);
  const notes: string[] = [];
  let demo: DemoInfo | null = null;
  try {
    if (config.bootstrapFile) {
      const report = await applyBootstrap(
        rt,
        readBootstrapFile(config.bootstrapFile),
        operatorMeta('bootstrap'),
      );
      await rt.settle(report.position);
      notes.push(`bootstrap ${config.bootstrapFile}: ${report.appended} change(s) applied`, ...report.notes);
    } else if (options.demo !== false) {
      demo = await ensureDemo(rt);
    }
  } catch (err) {
    await rt.close();
    throw err;
  }
  // Scaled out, the projector role follows the log live; embedded, projections apply inline.
  const following = config.store !== 'embedded' && config.roles.has('projector') ? followForever(rt) : null;
  const app = createApp(rt, allRoutes(rt));
  const server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Longer than clients' and load balancers' idle timeouts, so the server is never the side that races a reused connection.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  // --- scheduler role (src/scheduler.ts): time-driven commands; stopped before the stores close. ---
  const scheduler = config.roles.has('scheduler') ? startScheduler(rt) : null;
  // --- end scheduler role ---
  const address = server.address() as AddressInfo;
  const url = config.port === 0 ? `http://${config.host}:${address.port}` : config.baseUrl;
  if (config.port === 0) rt.config.baseUrl = url;
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      // Stop accepting, let in-flight requests finish, then close the stores.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await scheduler?.stop();
      await rt.close();
      await following;
    })();
    return stopping;
  };
  return { rt, server, url, demo, notes, stop };
}

/** Runs the projector until the runtime closes, restarting with backoff after a failure. */
async function followForever(rt: Runtime): Promise<void> {
  let delay = 500;
  for (;;) {
    try {
      await rt.projections.follow();
      return;
    } catch (err) {
      if (rt.projections.isStopped) return;
      rt.logger.error({ err: { message: (err as Error).message } }, 'projector failed; restarting');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
