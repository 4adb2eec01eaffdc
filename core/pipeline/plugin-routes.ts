/**
 * Plugins' routes, bound to the gateway's services and each plugin's shared state: data-plane endpoints become
 * local endpoints (served behind a pipeline like the core's), admin routes join the core's under /admin/v1.
 */
import { compileRequestSchema } from '../validation.ts';
import type { AnyPluginDefinition } from './plugin.ts';
import type { AdminRequest, AdminRouteDescription, EndpointDescription } from './routes.ts';
import type { GatewayMiddleware } from './context.ts';
import type { PluginServices } from './services.ts';

export interface BoundEndpoint extends EndpointDescription {
  kind: 'local';
  handler(): GatewayMiddleware;
}

export interface BoundAdminRoute extends AdminRouteDescription {
  handle(request: AdminRequest): Promise<unknown>;
}

export function pluginEndpoints(plugins: readonly AnyPluginDefinition[], services: PluginServices, shared: ReadonlyMap<string, unknown>): BoundEndpoint[] {
  return plugins.flatMap((plugin) => (plugin.endpoints ?? []).map(({ handler, ...description }): BoundEndpoint => ({
    ...description,
    kind: 'local',
    handler: () => handler(services, shared.get(plugin.name)),
  })));
}

/** A route's declared requestSchema is enforced: its handler gets only bodies that match (else VALIDATION_ERROR). */
export function pluginAdminRoutes(plugins: readonly AnyPluginDefinition[], services: PluginServices, shared: ReadonlyMap<string, unknown>): BoundAdminRoute[] {
  return plugins.flatMap((plugin) => (plugin.adminRoutes ?? []).map(({ handle, ...description }): BoundAdminRoute => {
    const validate = description.requestSchema ? compileRequestSchema(description.requestSchema) : undefined;
    return {
      ...description,
      handle: (request) => handle(validate ? { ...request, body: async () => validate(await request.body()) } : request, services, shared.get(plugin.name)),
    };
  }));
}
