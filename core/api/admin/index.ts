/** The admin API under /admin/v1: the routes of routes.ts behind adminAuth. */
import { Readable } from 'node:stream';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { GatewayError } from '../../errors.ts';
import { jsonBodyReader } from '../../ingress/body.ts';
import { refuseUnstorableText } from '../../validation.ts';
import { adminAuth, type AdminCredentials } from './credentials.ts';
import type { AdminWriteListener, BoundAdminRoute } from '../../pipeline/plugin-routes.ts';
import type { AdminScope } from '../../pipeline/routes.ts';
import { adminRoutes, type AdminDeps } from './routes.ts';

const ADMIN_BODY_LIMIT = 1024 * 1024;

export const ADMIN_PREFIX = '/admin/v1';

export interface AdminRouterOptions extends AdminDeps {
  credentials: AdminCredentials;
  extraRoutes: readonly BoundAdminRoute[];
  /** Told of every write (non-GET) once it is answered, refused ones included: plugins' onAdminWrite. */
  onWrite?: AdminWriteListener;
  /** The caller's address as the data plane resolves it (server.trustProxy); the socket peer without it. */
  clientIp?: (ctx: Context) => string;
}

export function adminRouter(deps: AdminRouterOptions): Router {
  const router = new Router({ prefix: ADMIN_PREFIX });
  const readBody = jsonBodyReader(ADMIN_BODY_LIMIT);
  if (deps.onWrite) router.use(reportWrites(deps.onWrite, deps.clientIp));
  router.use(adminAuth(deps.credentials));
  const routes = [...adminRoutes.map((route) => ({ ...route, handle: (request: Parameters<typeof route.handle>[0]) => route.handle(request, deps) })), ...deps.extraRoutes];
  for (const route of routes) {
    router.register(route.path, [route.method], async (ctx) => {
      // Every admin input ends up in SQL: refuse what Postgres cannot store here, once for every route.
      refuseUnstorableText(ctx.params, 'A path parameter');
      refuseUnstorableText(ctx.query, 'A query parameter');
      const body = await route.handle({
        scope: ctx.state.adminScope,
        params: ctx.params,
        query: ctx.query,
        body: async () => {
          const parsed = await readBody(ctx);
          refuseUnstorableText(parsed, 'A request body string');
          return parsed;
        },
      });
      ctx.status = route.status;
      if (route.stream === 'ndjson') {
        ctx.type = 'application/x-ndjson';
        ctx.body = Readable.from(ndjsonLines(body as AsyncIterable<unknown>));
      } else {
        ctx.body = body;
      }
    });
  }
  return router;
}

async function* ndjsonLines(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  for await (const item of items) yield `${JSON.stringify(item)}\n`;
}

/**
 * Runs before the credentials are checked, so that a refused write is reported too. The event is handed over
 * after the answer is decided and never awaited: the listener queues it, off the response's path.
 */
function reportWrites(onWrite: AdminWriteListener, clientIp: ((ctx: Context) => string) | undefined) {
  return async (ctx: Context, next: Next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return next();
    let errorCode: string | null = null;
    let status = 500;
    try {
      await next();
      status = ctx.status;
    } catch (err) {
      errorCode = err instanceof GatewayError ? err.code : 'INTERNAL_ERROR';
      status = err instanceof GatewayError ? err.status : 500;
      throw err;
    } finally {
      const scope = ctx.state.adminScope as AdminScope | undefined;
      onWrite({
        time: Date.now(),
        requestId: String(ctx.state.requestId ?? ''),
        actor: scope?.actor ?? null,
        tenantId: scope?.tenantId ?? null,
        method: ctx.method,
        path: ctx.path,
        route: typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : ctx.path,
        params: { ...(ctx.params ?? {}) },
        status,
        errorCode,
        clientIp: clientIp ? clientIp(ctx) : (ctx.req.socket.remoteAddress ?? ''),
      });
    }
  };
}
