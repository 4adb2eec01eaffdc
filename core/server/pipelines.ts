/**
 * Builds each route's middleware chain: the route entry (per-request state, then the answer on the way
 * out), the pipeline's plugins in their configured order, and the dispatcher last.
 */
import type { Context } from 'koa';
import { DEFAULT_PIPELINE, type GatewayConfig, type PipelineConfig, type ServerConfig } from '../config/types.ts';

import { GatewayError } from '../errors.ts';
import { clientAddress, compileAddressList } from '../identity/addresses.ts';
import type { EndpointDefinition, LocalEndpointDeps } from '../ingress/endpoint.ts';
import { jsonBodyReader } from '../ingress/body.ts';
import type { Logger } from '../logger.ts';
import { withTimeout } from '../timeout.ts';
import type { GatewayContext, GatewayMiddleware, GatewayState } from '../pipeline/context.ts';
import type { PluginServices } from '../pipeline/plugin.ts';
import type { PluginRegistry } from '../pipeline/registry.ts';
import { attachStages, positioned, StageList, stagedStream } from '../pipeline/stages.ts';
import { attachAbort, RequestAbort } from '../pipeline/abort.ts';
import { RequestState } from './request-state.ts';

export function pipelineForRoute(config: GatewayConfig, path: string): PipelineConfig {
  // The loader always leaves a `default` pipeline (the file's, or the implicit one).
  return config.pipelines.find((p) => p.routes.includes(path)) ?? config.pipelines.find((p) => p.name === DEFAULT_PIPELINE)!;
}

/** Runs every registered plugin's init once, in registration order; one that hangs fails the boot with its name. */
export async function initPlugins(config: GatewayConfig, registry: PluginRegistry, services: PluginServices): Promise<Map<string, unknown>> {
  const shared = new Map<string, unknown>();
  for (const plugin of registry.list()) {
    if (!plugin.init) continue;
    const state = await withTimeout(
      Promise.resolve().then(() => plugin.init!(services)),
      config.server.pluginSetupTimeoutMs,
      `plugin "${plugin.name}" did not finish its init within ${config.server.pluginSetupTimeoutMs} ms`,
    );
    shared.set(plugin.name, state);
  }
  return shared;
}

/** Runs every plugin's setup once per pipeline entry; a setup that hangs fails the boot with its name. */
export async function setupPipelines(
  config: GatewayConfig,
  registry: PluginRegistry,
  services: PluginServices,
  shared: ReadonlyMap<string, unknown>,
): Promise<Map<string, GatewayMiddleware[]>> {
  const built = new Map<string, GatewayMiddleware[]>();
  for (const pipeline of config.pipelines) {
    const chain: GatewayMiddleware[] = [];
    for (const [position, entry] of pipeline.plugins.entries()) {
      const plugin = registry.get(entry.name);
      if (!plugin) throw new Error(`pipeline "${pipeline.name}": unknown plugin "${entry.name}"`);
      const label = `plugin "${entry.name}" (pipeline "${pipeline.name}")`;
      const middleware = await withTimeout(
        Promise.resolve().then(() => plugin.setup(entry.config as never, services, shared.get(plugin.name))),
        config.server.pluginSetupTimeoutMs,
        `${label} did not finish its setup within ${config.server.pluginSetupTimeoutMs} ms`,
      );
      if (typeof middleware !== 'function') throw new Error(`${label}: setup must return a middleware function`);
      chain.push(positioned(position, middleware, position === pipeline.plugins.length - 1));
    }
    built.set(pipeline.name, chain);
  }
  return built;
}

export type ClientIpResolver = (ctx: Context) => string;

/** gw.clientIp for every request; the trusted-proxy list is compiled here, once. */
export function clientIpResolver(server: ServerConfig): ClientIpResolver {
  const trust = { trustProxy: server.trustProxy, isTrustedProxy: compileAddressList(server.trustedProxies) };
  return (ctx) => clientAddress(ctx.req.socket.remoteAddress ?? '', ctx.get('x-forwarded-for') || undefined, trust);
}

/** The first middleware of every data-plane route. */
export function routeEntry(
  endpoint: EndpointDefinition, pipeline: string, bodyLimitBytes: number, logger: Logger, clientIp: ClientIpResolver, deps: LocalEndpointDeps,
): GatewayMiddleware {
  const limit = endpoint.bodyLimitBytes ?? bodyLimitBytes;
  const custom = endpoint.kind === 'dispatch' ? endpoint.readBody : undefined;
  const readBody = custom ? (ctx: Context) => custom(ctx as GatewayContext, limit) : jsonBodyReader(limit);
  const plugins = pipelineForRoute(deps.config, endpoint.path).plugins.length;
  return async (ctx, next) => {
    const stages = new StageList();
    const gw = createState(ctx, endpoint, pipeline, readBody, clientIp(ctx), stages, deps, plugins);
    ctx.state.gw = gw;
    await next();
    if (endpoint.kind === 'local') return; // its handler has answered
    if (gw.stream && stages.entries.length > 0) gw.stream = stagedStream(gw.stream, stages.ordered(), gw.signal, logger);
    if (!gw.stream && !gw.result) throw new GatewayError('INTERNAL_ERROR', 'The pipeline produced no answer');
    await endpoint.respond(ctx, deps);
  };
}

function createState(
  ctx: GatewayContext, endpoint: EndpointDefinition, pipeline: string, readBody: (ctx: Context) => Promise<unknown>, clientIp: string, stages: StageList,
  deps: LocalEndpointDeps, plugins: number,
): GatewayState {
  const abort = new RequestAbort();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) abort.abort();
  });
  const gw = new RequestState(ctx, { endpoint, pipeline, clientIp, plugins, abort, stages, readBody, deps });
  attachStages(gw, stages);
  attachAbort(gw, abort);
  return gw;
}
