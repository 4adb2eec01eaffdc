/** The admin API under /admin/v1: the routes of routes.ts behind adminAuth. */
import Router from '@koa/router';
import { jsonBodyReader } from '../../ingress/body.ts';
import { refuseUnstorableText } from '../../validation.ts';
import { adminAuth, type AdminCredentials } from './credentials.ts';
import type { BoundAdminRoute } from '../../pipeline/plugin-routes.ts';
import { adminRoutes, type AdminDeps } from './routes.ts';

const ADMIN_BODY_LIMIT = 1024 * 1024;

export const ADMIN_PREFIX = '/admin/v1';

export function adminRouter(deps: AdminDeps & { credentials: AdminCredentials; extraRoutes: readonly BoundAdminRoute[] }): Router {
  const router = new Router({ prefix: ADMIN_PREFIX });
  const readBody = jsonBodyReader(ADMIN_BODY_LIMIT);
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
      ctx.body = body;
    });
  }
  return router;
}
