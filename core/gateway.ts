/**
 * createGateway(loaded config) -> { app, server, listen(), close() }. Tests build gateways in-process with
 * this; `aigw start` is this plus signal handling.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { installLeanResponse } from './server/lean-response.ts';
import Router from '@koa/router';
import { adminRouter } from './api/admin/index.ts';
import { adminApiOn } from './api/admin/credentials.ts';
import { providerSummaries } from './api/admin/providers.ts';
import { adminUiRouter, defaultUiDir } from './api/admin-ui.ts';
import { registerBatchJobs } from './api/batches-jobs.ts';
import { registerFileJobs } from './api/files-expiry.ts';
import { registerVectorStoreExpiry } from './api/vector-stores-expiry.ts';
import { registerVideoJobs } from './api/video-poll.ts';
import { ingestHandler, VECTOR_STORE_INGEST } from './api/vector-stores-ingest.ts';
import { healthRouter } from './api/health.ts';
import { UpgradedSockets } from './api/proxy-upgrade.ts';
import { registerRealtimeJobs } from './api/realtime.ts';
import { RealtimeHub } from './realtime/hub.ts';
import { buildOpenApiDocument, openApiRouter } from './api/openapi.ts';
import type { LoadedConfig } from './boot/load.ts';
import { Breakers } from './dispatch/breakers.ts';
import { createDispatcher } from './dispatch/dispatcher.ts';
import { ImageProgressHub } from './dispatch/image-progress.ts';
import { cutLingering } from './ingress/drain.ts';
import { createEmbeddingService } from './dispatch/embed.ts';
import type { EmbeddingService } from './pipeline/embed.ts';
import { fileSearchTool } from './retrieval/file-search.ts';
import { createRetrievalService } from './retrieval/search.ts';
import { createProviderIO } from './dispatch/provider-io.ts';
import { RoutingTable } from './dispatch/routing.ts';
import { UpstreamClient } from './dispatch/upstream.ts';
import { createIdentity, type IdentityServices as Identity } from './identity/services.ts';
import { endpoints } from './api/endpoints.ts';
import type { LocalEndpointDeps } from './ingress/endpoint.ts';
import { JobRunner } from './jobs/runner.ts';
import { createLogger, type Logger } from './logger.ts';
import { loadTracing, type TracingEnv } from './observability/tracing.ts';
import type { Clock, PluginServices } from './pipeline/plugin.ts';
import { pluginAdminRoutes, pluginAdminWriteListener, pluginEndpoints } from './pipeline/plugin-routes.ts';
import { clientIpResolver, initPlugins, pipelineForRoute, routeEntry, setupPipelines } from './server/pipelines.ts';
import { ConnectionLimiter } from './server/connections.ts';
import { StaticRoutes } from './server/static-routes.ts';
import { meteredWorkReporter, type MeterWork } from './server/metered.ts';
import { createTraffic, requestContext } from './server/request-context.ts';
import type { Database } from './store/database.ts';
import type { KV } from './store/kv.ts';
import { openStores } from './store/open.ts';
import { labelBounds } from './observability/labels.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { requestObserver } from './observability/observer.ts';
import { metricsRouter } from './observability/router.ts';
import { StoreStallReporter } from './observability/store-stalls.ts';
import { VERSION } from './version.ts';
import type { Log } from './log.ts';
import { compileOutboundPolicy } from './outbound/policy.ts';
import { WEBHOOK_DELIVER, webhookDeliveryHandler } from './webhooks/deliver.ts';

export interface GatewayOptions {
  logger?: Logger;
  clock?: Clock;
  /** Tests: isolate Redis keys and the Postgres schema per run. */
  kvPrefix?: string;
  dbSchema?: string;
  /** Tests: how long one second of a realtime session's idle timeout lasts (default 1000 ms). */
  realtimeIdleUnitMs?: number;
  /** Tests: the built admin UI served at /ui (default: dist/ui of the checkout or package). */
  uiDir?: string;
  /** Where the OTEL_* variables that turn traces on are read (default process.env). */
  env?: TracingEnv;
}

/** The gateway's own services: the stores and identity in full (plugins get the narrow PluginServices). */
export interface GatewayServices {
  config: LoadedConfig['config'];
  db: Database;
  kv: KV;
  logger: Logger;
  clock: Clock;
  apiKeys: Identity['apiKeys'];
  directory: Identity['directory'];
  authenticator: Identity['authenticator'];
  providers: LoadedConfig['providers'];
}

export interface Gateway {
  app: Koa;
  server: Server;
  services: GatewayServices;
  /** The durable job runner: handlers are registered before listen(), which starts it; close() stops it. */
  jobs: JobRunner;
  /** What a plugin's init returned (undefined for a plugin without init, or an unknown name). */
  pluginState(name: string): unknown;
  /** What every local endpoint answers with: the key of per-gateway registries such as liveResponses(). */
  endpointDeps: LocalEndpointDeps;
  /**
   * Reports work metered outside a request (a batch that ended) to every registered plugin's onMeteredWork, in
   * registration order; rejects naming the plugins that failed, after running them all. Safe to call again.
   */
  meterWork: MeterWork;
  /** This instance's realtime sessions (core/realtime/hub.ts). */
  realtime: RealtimeHub;
  /** Listens on server.port/host (or the given port); resolves with the loopback URL. */
  listen(port?: number): Promise<string>;
  /** Graceful: stop accepting, drain up to the deadline, flush, close the stores. Idempotent. */
  close(): Promise<void>;
}

/** Registers the `webhook.deliver` job kind on the gateway's job runner, with the config's outbound rules. */
export function registerWebhookJobs(runner: Pick<JobRunner, 'register'>, config: LoadedConfig['config'], logger?: Log): void {
  // A delivery whose instance died mid-attempt counts against the same bound as the attempts that failed.
  runner.register(WEBHOOK_DELIVER, webhookDeliveryHandler({
    config: config.webhooks,
    policy: compileOutboundPolicy(config.outbound),
    ...(logger ? { logger } : {}),
  }), { maxAttempts: config.webhooks.maxAttempts });
}

export async function createGateway(loaded: LoadedConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const { config } = loaded;
  const loadedAt = Date.now();
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? { now: Date.now };
  const closeHooks: Array<() => Promise<void>> = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch((err) => logger.error({ err }, 'cleanup failed'));
    cleanups.length = 0;
  };
  const runCloseHooks = async () => {
    for (const hook of closeHooks) await hook().catch((err) => logger.error({ err }, 'close hook failed'));
  };

  // Before anything that needs cleaning up: a refused OTEL_* setting fails the start with nothing opened.
  const tracing = await loadTracing(options.env ?? process.env);
  if (tracing) {
    logger.info({ url: tracing.url }, 'OpenTelemetry traces are exported over OTLP/HTTP');
    cleanups.push(() => tracing.close());
  }

  // Store stalls are logged at once; the metrics, built later, are told from then on.
  const storeStalls = new StoreStallReporter(logger, clock.now);
  const stores = await openStores(config, {
    migrate: true,
    pluginMigrations: loaded.plugins.migrationSources(),
    ...(options.dbSchema ? { dbSchema: options.dbSchema } : {}),
    ...(options.kvPrefix ? { kvPrefix: options.kvPrefix } : {}),
    onNoVector: (reason) => logger.warn({ reason }, 'pgvector is not available on this Postgres: vector search will use an exact scan'),
    onLooseDataDir: (dataDir, modes) => logger.warn(
      { dataDir, folderMode: modes.folder, groupOrOtherWritableEntries: modes.writableEntries },
      'the data folder is open to other users: run chmod -R go-rwx on it (new files are created owner-only)',
    ),
    onCloseError: (err) => logger.error({ err }, 'closing a store failed'),
    onStall: (store, stalled, timeoutMs) => {
      storeStalls.report(store, stalled, timeoutMs);
    },
  }).catch(async (err: unknown) => {
    await cleanup();
    throw err;
  });
  cleanups.push(() => stores.close());
  const { db, kv, lock } = stores;

  const upstream = new UpstreamClient(config.upstream, logger, tracing);
  const breakers = new Breakers(config.upstream.breaker, logger);
  cleanups.push(() => upstream.close(), () => breakers.shutdown());
  const io = createProviderIO(upstream, clock.now);
  const identity = createIdentity(config, db, kv, clock.now, logger);
  // Last-used times are written after in-flight requests finish and before the stores close.
  closeHooks.push(() => identity.lastUsed.stop());
  const services: GatewayServices = {
    config, db, kv, logger, clock,
    apiKeys: identity.apiKeys,
    directory: identity.directory,
    authenticator: identity.authenticator,
    providers: loaded.providers,
  };
  // Created before plugins' init so that they and the endpoints can enqueue; started by listen(), once every
  // handler is registered.
  const jobs = new JobRunner({
    db, logger, now: clock.now,
    ...config.jobs,
    shutdownTimeoutMs: config.server.shutdownTimeoutMs,
  });
  // Bound once the dispatcher exists, which needs the plugins set up first.
  let embedder: EmbeddingService | undefined;
  const embeddings: EmbeddingService = {
    embed: async (request) => {
      if (!embedder) throw new Error('embeddings are served once the gateway is set up, not during plugin init');
      return embedder.embed(request);
    },
  };
  const retrieval = createRetrievalService({ db, embeddings, now: clock.now });
  const pluginServices: PluginServices = {
    config, db, kv, logger, clock,
    identity: {
      authenticate: (credential) => identity.authenticator.authenticate(credential),
      authenticateNow: (credential) => identity.authenticator.authenticateNow(credential),
    },
    embeddings,
    retrieval,
    onClose: (hook) => closeHooks.push(hook),
  };

  try {
    registerWebhookJobs(jobs, config, logger);
    await registerFileJobs(jobs, { db, config, providers: loaded.providers, upstream, breakers, io, logger });
    await registerVectorStoreExpiry(jobs, { db, config, logger });
    // meterWork is bound once the plugins are set up, before listen() starts the runner.
    // meterWork is bound once the plugins are set up, before listen() starts the runner.
    registerRealtimeJobs(jobs, { db, kv, meterWork: (work) => meterWork(work) });
    await registerVideoJobs(jobs, { config, db, providers: loaded.providers, call: { upstream, breakers, io }, logger, meterWork: (work) => meterWork(work) });
    const revoked = await identity.revocations.load();
    if (revoked > 0) logger.debug({ revoked }, 'JWT revocations loaded into the KV');
  } catch (err) {
    await cleanup();
    throw err;
  }
  identity.lastUsed.start();

  let pipelines: Awaited<ReturnType<typeof setupPipelines>>;
  let shared: Map<string, unknown>;
  try {
    shared = await initPlugins(config, loaded.plugins, pluginServices);
    pipelines = await setupPipelines(config, loaded.plugins, pluginServices, shared);
  } catch (err) {
    // Plugins set up before the failing one may hold connections or timers: release them as a shutdown would.
    await runCloseHooks();
    await cleanup();
    throw err;
  }

  const meterWork = meteredWorkReporter(loaded.plugins.list(), pluginServices, shared, logger);
  const routing = new RoutingTable(config, (slug) => loaded.providers.get(slug)?.defaultBaseUrl);
  const imageProgress = new ImageProgressHub();
  const dispatcher = createDispatcher({
    routing, providers: loaded.providers, upstream, breakers, retry: config.routing,
    io, db, now: clock.now, imageProgress: imageProgress.report,
    gatewayTools: new Map([['file_search', fileSearchTool(retrieval)]]),
  });
  embedder = createEmbeddingService({ dispatcher, routing, meterWork, now: clock.now });
  registerBatchJobs(jobs, {
    config, db, providers: loaded.providers, routing, call: { upstream, breakers, io }, jobs, now: clock.now, logger,
    meterWork,
  });
  jobs.register(VECTOR_STORE_INGEST, ingestHandler({ db, config, providers: loaded.providers, upstream, breakers, io, embeddings, logger }), { maxAttempts: config.vectorStores.maxAttempts + 1 });
  const localDeps: LocalEndpointDeps = { routing, providers: loaded.providers, loadedAt, config, upstream, breakers, io, db, kv, clock, jobs, meterWork, retrieval, imageProgress };
  const extraEndpoints = pluginEndpoints(loaded.plugins.list(), pluginServices, shared);
  const extraAdminRoutes = pluginAdminRoutes(loaded.plugins.list(), pluginServices, shared);
  const traffic = createTraffic();
  const connections = new ConnectionLimiter(config.server.maxConnections, logger);

  // Koa's proxy mode stays off: its ctx.ip is the leftmost X-Forwarded-For entry, which any client can forge.
  // The client address is gw.clientIp, resolved against server.trustedProxies (core/identity/addresses.ts).
  const app = new Koa();
  app.silent = true; // every error is rendered and logged by requestContext
  installLeanResponse(app);
  const metrics = config.server.metrics.enabled ? new GatewayMetrics(config, labelBounds(config, routePatterns(), (slug) => loaded.providers.get(slug)?.defaultBaseUrl), {
    inFlight: () => traffic.inFlight,
    breakers: () => breakers.states(),
    pools: () => upstream.pools(),
    connections: () => connections.stats(),
  }) : undefined;
  if (metrics) storeStalls.metrics = metrics;
  app.use(requestContext(logger, traffic, requestObserver({ config, logger, now: clock.now, ...(metrics ? { metrics } : {}) }), tracing));
  const staticRoutes = new StaticRoutes();
  const adminCredentials = {
    adminToken: config.auth.adminToken,
    controlToken: lock?.controlToken,
    authenticator: identity.jwtEnabled ? identity.authenticator : undefined,
  };
  const routers = [
    healthRouter({ db, kv, breakers, connections: () => connections.stats(), upstreamPools: () => upstream.pools() }),
    ...(metrics ? [metricsRouter(config.server.metrics, metrics)] : []),
    openApiRouter(buildOpenApiDocument([...endpoints, ...extraEndpoints], VERSION, extraAdminRoutes, { metrics: metrics !== undefined })),
    adminUiRouter({ enabled: adminApiOn(adminCredentials), dir: options.uiDir ?? defaultUiDir() }),
    adminRouter({
      ...identity,
      providers: providerSummaries(config, () => breakers.states()),
      extraRoutes: extraAdminRoutes,
      onWrite: pluginAdminWriteListener(loaded.plugins.list(), pluginServices, shared),
      clientIp: clientIpResolver(config.server),
      credentials: adminCredentials,
    }),
    dataPlaneRouter(),
  ];
  app.use(staticRoutes.middleware());
  for (const router of routers) app.use(router.routes()).use(router.allowedMethods({ throw: true }));

  /** Every route pattern the gateway registers: the only values the metrics' route label takes (besides `other`). */
  function routePatterns(): string[] {
    return [...endpoints, ...extraEndpoints].flatMap((e) => [e.path, e.routePattern ?? e.path]).concat(['/healthz', '/readyz', '/metrics']);
  }

  function dataPlaneRouter(): Router {
    const router = new Router();
    const clientIp = clientIpResolver(config.server);
    for (const endpoint of [...endpoints, ...extraEndpoints]) {
      const pipeline = pipelineForRoute(config, endpoint.path);
      const last = endpoint.kind === 'dispatch' ? dispatcher : endpoint.handler(localDeps);
      const chain = [routeEntry(endpoint, pipeline.name, config.server.jsonBodyLimitBytes, logger, clientIp, localDeps), ...pipelines.get(pipeline.name)!, last];
      const pattern = endpoint.routePattern ?? endpoint.path;
      router.register(pattern, [endpoint.method], chain as unknown as Koa.Middleware[]);
      if (StaticRoutes.holds(pattern)) staticRoutes.add(endpoint.method, pattern, chain as unknown as Koa.Middleware[]);
    }
    return router;
  }

  const { headersTimeoutMs, requestTimeoutMs, idleSocketTimeoutMs } = config.server;
  const server = createServer({
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    // How often Node looks for requests past those timeouts: their precision, at a cost linear in open connections.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(headersTimeoutMs / 4))),
  }, app.callback());
  // Longer than common load balancers' idle timeouts, so that they close idle connections first.
  server.keepAliveTimeout = 65_000;
  server.timeout = idleSocketTimeoutMs;
  connections.attach(server);
  // WebSocket upgrades go through the app too, so /proxy's plugins admit them (core/api/proxy-upgrade.ts).
  const upgraded = new UpgradedSockets();
  const appUpgrade = upgraded.listener(app.callback());
  // The realtime connect route authenticates by its ticket, not by the auth plugin (core/realtime/hub.ts).
  const realtime = new RealtimeHub({ config, db, kv, providers: loaded.providers, now: clock.now, logger, meterWork, jobs, idleUnitMs: options.realtimeIdleUnitMs ?? 1000 });
  server.on('upgrade', (req, socket, head) => (RealtimeHub.handles(req) ? realtime.upgrade(req, socket, head) : appUpgrade(req, socket, head)));

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= (async () => {
    traffic.draining = true;
    // Jobs stop under the same deadline as requests, alongside them: no new claims, running handlers finish
    // or are handed back, all before the close hooks flush and the stores close.
    const jobsStopped = jobs.stop();
    // Realtime sessions end now (1001 to both sides), their usage recorded while the stores are still open.
    const realtimeClosed = realtime.closeAll().catch((err: unknown) => logger.warn({ err }, 'realtime sessions could not all be closed'));
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
    cutLingering(server);
    upgraded.closeAll();
    await realtimeClosed;
    await jobsStopped;
    await runCloseHooks();
    await cleanup();
  })());

  const listen = (port?: number) => new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port ?? config.server.port, config.server.host, async () => {
      server.off('error', reject);
      const { port: bound } = server.address() as AddressInfo;
      const url = `http://127.0.0.1:${bound}`;
      await lock?.advertise(url).catch((err) => logger.warn({ err }, 'could not advertise the gateway in the data folder'));
      if (!closing) jobs.start();
      resolve(url);
    });
  });

  return { app, server, services, jobs, pluginState: (name) => shared.get(name), endpointDeps: localDeps, meterWork, realtime, listen, close };
}
