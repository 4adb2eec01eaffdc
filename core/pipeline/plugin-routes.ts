/**
 * Plugins' routes, bound to the gateway's services and each plugin's shared state: data-plane endpoints become
 * local endpoints (served behind a pipeline like the core's), admin routes join the core's under /admin/v1.
 */
import { compileRequestSchema } from '../validation.ts';
import type { AnyPluginDefinition } from './plugin.ts';
import type { AdminRequest, AdminRouteDescription, AdminWriteEvent, EndpointDescription } from './routes.ts';
import type { GatewayMiddleware } from './context.ts';
import type { PluginServices } from './services.ts';

export interface BoundEndpoint extends EndpointDescription {
  kind: 'local';
  handler(): GatewayMiddleware;
}

export interface BoundAdminRoute extends AdminRouteDescription {
  handle(request: AdminRequest): Promise<unknown>;
}

/** Every plugin's onAdminWrite, bound: the admin router calls it for each write it answered, never awaiting it. */
export type AdminWriteListener = (event: AdminWriteEvent) => void;

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

/** The plugins' onAdminWrite hooks as one listener; a hook that throws or rejects is logged, never answered. */
export function pluginAdminWriteListener(plugins: readonly AnyPluginDefinition[], services: PluginServices, shared: ReadonlyMap<string, unknown>): AdminWriteListener {
  const hooks = plugins.filter((plugin) => plugin.onAdminWrite).map((plugin) => ({ name: plugin.name, hook: plugin.onAdminWrite! }));
  return (event) => {
    for (const { name, hook } of hooks) {
      const failed = (err: unknown) => services.logger.error({ err, plugin: name, requestId: event.requestId }, 'a plugin\'s onAdminWrite failed');
      try {
        void Promise.resolve(hook(event, services, shared.get(name))).catch(failed);
      } catch (err) {
        failed(err);
      }
    }
  };
}
