/**
 * The admin API under /admin/v1. A bearer equal to AIGW_ADMIN_TOKEN (or the local control token the
 * running gateway leaves in its data folder for the CLI) is required.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { GatewayError } from '../../errors.ts';
import type { ApiKeyService } from '../../identity/api-keys.ts';
import { jsonBodyReader } from '../../ingress/body.ts';

const ADMIN_BODY_LIMIT = 1024 * 1024;

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Without AIGW_ADMIN_TOKEN the admin API is off: it answers 404 to everyone but the holder of the local
 * control token, which only a process that can read the data folder has.
 */
export function adminAuth(tokens: { adminToken?: string | undefined; controlToken?: string | undefined }) {
  const accepted = [tokens.adminToken, tokens.controlToken].filter((t): t is string => Boolean(t)).map(digest);
  return async (ctx: Context, next: Next) => {
    const match = /^Bearer\s+(\S+)$/i.exec(ctx.get('authorization'));
    const presented = match ? digest(match[1]!) : undefined;
    // Compare digests so that every comparison takes the same time whatever the token's length.
    const valid = presented !== undefined && accepted.some((t) => timingSafeEqual(t, presented));
    if (!valid) {
      if (!tokens.adminToken) throw new GatewayError('NOT_FOUND', 'The admin API is off: set AIGW_ADMIN_TOKEN to turn it on');
      if (!match) throw new GatewayError('AUTH_REQUIRED', 'Admin API requires Authorization: Bearer <admin token>');
      throw new GatewayError('AUTH_INVALID_TOKEN', 'Invalid admin token');
    }
    ctx.state.adminActor = 'admin-token';
    await next();
  };
}

export function adminRouter(deps: { apiKeys: ApiKeyService; tokens: Parameters<typeof adminAuth>[0] }): Router {
  const router = new Router({ prefix: '/admin/v1' });
  const readBody = jsonBodyReader(ADMIN_BODY_LIMIT);
  router.use(adminAuth(deps.tokens));

  router.post('/keys', async (ctx) => {
    const record = await deps.apiKeys.create(await readBody(ctx), ctx.state.adminActor as string);
    ctx.status = 201;
    ctx.body = record;
  });

  return router;
}
