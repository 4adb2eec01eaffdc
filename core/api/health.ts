/** /healthz: the process answers. /readyz: the stores answer too, with details (and breaker states). */
import Router from '@koa/router';
import type { Breakers } from '../dispatch/breakers.ts';
import type { OriginPoolState } from '../dispatch/origin-slots.ts';
import type { ConnectionStats } from '../server/connections.ts';
import type { Database } from '../store/database.ts';
import type { KV } from '../store/kv.ts';
import { withTimeout } from '../timeout.ts';

const CHECK_TIMEOUT_MS = 2000;

async function check(name: string, kind: string, probe: () => Promise<void>) {
  const started = performance.now();
  try {
    await withTimeout(probe(), CHECK_TIMEOUT_MS, `no answer within ${CHECK_TIMEOUT_MS} ms`);
    return { name, kind, ok: true, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
  } catch (err) {
    return { name, kind, ok: false, error: (err as Error).message };
  }
}

export interface HealthDeps {
  db: Database;
  kv: KV;
  breakers: Breakers;
  /** Client connections against server.maxConnections. */
  connections?: () => ConnectionStats;
  /** Requests in flight and waiting, per upstream origin. */
  upstreamPools?: () => OriginPoolState[];
}

export function healthRouter(deps: HealthDeps): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const checks = await Promise.all([
      check('database', deps.db.kind, () => deps.db.ping()),
      check('kv', deps.kv.kind, () => deps.kv.ping()),
    ]);
    const ready = checks.every((c) => c.ok);
    ctx.status = ready ? 200 : 503;
    ctx.body = {
      status: ready ? 'ready' : 'not_ready', checks, breakers: deps.breakers.states(),
      connections: deps.connections?.(), upstreamPools: deps.upstreamPools?.(),
    };
  });
  return router;
}
