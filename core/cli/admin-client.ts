/**
 * The CLI's admin commands speak the admin API, so they follow the same rules, validation and audit as HTTP
 * callers. With the embedded database held by a running gateway, they ask that gateway (with the control token
 * it left in the data folder); otherwise they serve the admin API themselves, on loopback, over the stores.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { LoadedConfig } from '../boot/load.ts';
import { ADMIN_PREFIX, adminRouter } from '../api/admin/index.ts';
import { providerSummaries } from '../api/admin/providers.ts';
import { pluginAdminRoutes, pluginAdminWriteListener } from '../pipeline/plugin-routes.ts';
import { initPlugins } from '../server/pipelines.ts';
import type { PluginServices } from '../pipeline/services.ts';
import { createIdentity } from '../identity/services.ts';
import { silentLogger } from '../logger.ts';
import { UNOBSERVED } from '../observability/observer.ts';
import { createTraffic, requestContext } from '../server/request-context.ts';
import { readLock } from '../store/data-dir-lock.ts';
import { openStores } from '../store/open.ts';

export class AdminCallError extends Error {}

export type AdminCall = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown) => Promise<unknown>;

async function call(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${baseUrl}${ADMIN_PREFIX}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as { error?: { code: string; message: string; details?: unknown } };
  if (!response.ok) {
    const details = answer.error?.details ? ` ${JSON.stringify(answer.error.details)}` : '';
    throw new AdminCallError(`${answer.error?.code ?? response.status}: ${answer.error?.message ?? response.statusText}${details}`);
  }
  return answer;
}

/** Runs `work` with an admin API to call: the running gateway's, or one served here for the duration. */
export async function withAdminApi<T>(loaded: LoadedConfig, work: (admin: AdminCall) => Promise<T>): Promise<T> {
  const { config } = loaded;
  const running = config.storage.databaseUrl ? null : await readLock(config.storage.dataDir);
  if (running?.url && running.controlToken) {
    const { url, controlToken } = running;
    return work((method, path, body) => call(url, controlToken, method, path, body));
  }

  const stores = await openStores(config, { migrate: true, pluginMigrations: loaded.plugins.migrationSources() });
  const server = createServer();
  const closeHooks: Array<() => Promise<void>> = [];
  try {
    const identity = createIdentity(config, stores.db, stores.kv, Date.now, silentLogger());
    // Plugins' admin routes (budgets, ...) are served too, over the same stores.
    const services: PluginServices = {
      config, db: stores.db, kv: stores.kv, logger: silentLogger(), clock: { now: Date.now },
      identity: { authenticate: (credential) => identity.authenticator.authenticate(credential) },
      // The admin API serves no traffic: nothing here embeds.
      embeddings: { embed: async () => { throw new Error('the CLI\'s admin API makes no embeddings'); } },
      retrieval: { search: async () => { throw new Error('the CLI\'s admin API searches no vector store'); } },
      onClose: (hook) => closeHooks.push(hook),
    };
    const plugins = loaded.plugins.list();
    const shared = await initPlugins(config, loaded.plugins, services);
    const extraRoutes = pluginAdminRoutes(plugins, services, shared);
    const onWrite = pluginAdminWriteListener(plugins, services, shared);
    const controlToken = randomBytes(32).toString('base64url');
    const app = new Koa();
    app.silent = true;
    app.use(requestContext(silentLogger(), createTraffic(), UNOBSERVED));
    // This process calls no upstream: no breaker has a state here.
    const router = adminRouter({ ...identity, providers: providerSummaries(config, () => []), extraRoutes, onWrite, credentials: { controlToken } });
    app.use(router.routes()).use(router.allowedMethods({ throw: true }));
    server.on('request', app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return await work((method, path, body) => call(url, controlToken, method, path, body));
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const hook of closeHooks) await hook().catch(() => {});
    await stores.close();
  }
}
