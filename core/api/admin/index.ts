/** The admin API under /admin/v1: the routes of routes.ts behind adminAuth. */
import Router from '@koa/router';
import { jsonBodyReader } from '../../ingress/body.ts';
import { adminAuth, type AdminCredentials } from './auth.ts';
import { adminRoutes, type AdminDeps } from './routes.ts';

const ADMIN_BODY_LIMIT = 1024 * 1024;

export const ADMIN_PREFIX = '/admin/v1';

export function adminRouter(deps: AdminDeps & { credentials: AdminCredentials }): Router {
  const router = new Router({ prefix: ADMIN_PREFIX });
  const readBody = jsonBodyReader(ADMIN_BODY_LIMIT);
  router.use(adminAuth(deps.credentials));
  for (const route of adminRoutes) {
    router.register(route.path, [route.method], async (ctx) => {
      const body = await route.handle({
        scope: ctx.state.adminScope,
        params: ctx.params,
        query: ctx.query,
        body: () => readBody(ctx),
      }, deps);
      ctx.status = route.status;
      ctx.body = body;
    });
  }
  return router;
}
