/**
 * createGateway(loaded config) -> { app, server, listen(), close() }. Tests build gateways in-process with
 * this; `aigw start` is this plus signal handling.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import { adminRouter } from './api/admin/index.ts';
import { healthRouter } from './api/health.ts';
import { buildOpenApiDocument, openApiRouter } from './api/openapi.ts';
import type { LoadedConfig } from './config/load.ts';
import { Breakers } from './dispatch/breakers.ts';
import { createDispatcher } from './dispatch/dispatcher.ts';
import { RoutingTable } from './dispatch/routing.ts';
import { UpstreamClient } from './dispatch/upstream.ts';
import { ApiKeyService } from './identity/api-keys.ts';
import { endpoints } from './ingress/endpoints.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Clock, PluginServices } from './pipeline/plugin.ts';
import { pipelineForRoute, routeEntry, setupPipelines } from './pipeline/runner.ts';
import { createTraffic, requestContext } from './server/request-context.ts';
import { DataDirLock } from './store/data-dir-lock.ts';
import { openDatabase, type Database } from './store/database.ts';
import { openKv, type KV } from './store/kv.ts';
import { migrate } from './store/migrate.ts';
import { VERSION } from './version.ts';

export interface GatewayOptions {
  logger?: Logger;
  clock?: Clock;
  /** Tests: isolate Redis keys and the Postgres schema per run. */
  kvPrefix?: string;
  dbSchema?: string;
}

export interface Gateway {
  app: Koa;
  server: Server;
  services: PluginServices;
  /** Listens on server.port/host (or the given port); resolves with the loopback URL. */
  listen(port?: number): Promise<string>;
  /** Graceful: stop accepting, drain up to the deadline, flush, close the stores. Idempotent. */
  close(): Promise<void>;
}

export async function createGateway(loaded: LoadedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const { config } = loaded;
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? { now: Date.now };
  const closeHooks: Array<() => Promise<void>> = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err) => logger.error({ err }, 'cleanup failed'));
    cleanups.length = 0;
  };

  let lock: DataDirLock | undefined;
  let db: Database;
  let kv: KV;
  try {
    if (!config.storage.databaseUrl) {
      const acquired = await DataDirLock.acquire(config.storage.dataDir);
      cleanups.push(() => acquired.release());
      lock = acquired;
    }
    db = await openDatabase({
      databaseUrl: config.storage.databaseUrl,
      dataDir: config.storage.dataDir,
      ...(options.dbSchema ? { schema: options.dbSchema } : {}),
      onNoVector: (reason) => logger.warn({ reason }, 'pgvector is not available on this Postgres: vector search will use an exact scan'),
    });
    cleanups.push(() => db.close());
    await migrate(db);
    kv = await openKv({ redisUrl: config.storage.redisUrl, ...(options.kvPrefix ? { prefix: options.kvPrefix } : {}) });
    cleanups.push(() => kv.close());
  } catch (err) {
    await cleanup();
    throw err;
  }

  const upstream = new UpstreamClient(config.upstream);
  const breakers = new Breakers(config.upstream.breaker);
  cleanups.push(() => upstream.close(), () => breakers.shutdown());
  const apiKeys = new ApiKeyService(db, kv, config.auth.keyCacheTtlMs);
  const services: PluginServices = {
    config, db, kv, logger, clock, apiKeys,
    providers: loaded.providers,
    onClose: (hook) => closeHooks.push(hook),
  };

  let pipelines: Awaited<ReturnType<typeof setupPipelines>>;
  try {
    pipelines = await setupPipelines(config, loaded.plugins, services);
  } catch (err) {
    await cleanup();
    throw err;
  }

  const routing = new RoutingTable(config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl);
  const dispatcher = createDispatcher({ routing, providers: loaded.providers, upstream, breakers });
  const traffic = createTraffic();

  const app = new Koa({ proxy: config.server.trustProxy });
  app.silent = true; // every error is rendered and logged by requestContext
  app.use(requestContext(logger, traffic, config.server.accessLog));
  const routers = [
    healthRouter({ db, kv, breakers }),
    openApiRouter(buildOpenApiDocument(endpoints, VERSION)),
    adminRouter({ apiKeys, tokens: { adminToken: config.auth.adminToken, controlToken: lock?.controlToken } }),
    dataPlaneRouter(),
  ];
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods({ throw: true }));

  function dataPlaneRouter(): Router {
    const router = new Router();
    for (const endpoint of endpoints) {
      const pipeline = pipelineForRoute(config, endpoint.path);
      const chain = [routeEntry(endpoint, pipeline.name, config.server.jsonBodyLimitBytes, logger), ...pipelines.get(pipeline.name)!, dispatcher];
      router.register(endpoint.path, [endpoint.method], chain as unknown as Koa.Middleware[]);
    }
    return router;
  }

  const server = createServer(app.callback());
  // Longer than common load balancers' idle timeouts, so that they close idle connections first.
  server.keepAliveTimeout = 65_000;

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= (async () => {
    traffic.draining = true;
    server.close();
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), config.server.shutdownTimeoutMs);
    });
    const outcome = await Promise.race([traffic.idle().then(() => 'drained' as const), deadline]);
    clearTimeout(timer);
    if (outcome === 'deadline') logger.warn({ inFlight: traffic.inFlight }, 'shutdown deadline reached: closing remaining connections');
    server.closeAllConnections();
    for (const hook of closeHooks) await hook().catch((err) => logger.error({ err }, 'close hook failed'));
    await cleanup();
  })());

  const listen = (port?: number) => new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? config.server.port, config.server.host, async () => {
      server.off('error', reject);
      const { port: bound } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${bound}`;
      await lock?.advertise(url).catch((err) => logger.warn({ err }, 'could not advertise the gateway in the data folder'));
      resolve(url);
    });
  });

  return { app, server, services, listen, close };
}
