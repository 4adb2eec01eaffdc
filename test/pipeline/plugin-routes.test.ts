/** Plugins' admin routes bound to the gateway: a declared requestSchema is enforced before the handler runs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../core/errors.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { pluginAdminRoutes } from '../../core/pipeline/plugin-routes.ts';
import type { PluginServices } from '../../core/pipeline/services.ts';

test("a plugin admin route's requestSchema: a body that breaks it is a VALIDATION_ERROR, one that fits reaches handle", async () => {
  const seen: unknown[] = [];
  const plugin = definePlugin<Record<string, never>, { tiers: number }>({
    name: 'tiers', description: 'x', configSchema: { type: 'object', properties: {} },
    setup: () => async (_ctx, next) => next(),
    adminRoutes: [{
      method: 'PUT', path: '/tiers/:id', status: 200, summary: 'x',
      requestSchema: { type: 'object', additionalProperties: false, required: ['tier'], properties: { tier: { type: 'integer', minimum: 1 } } },
      handle: async (request, _services, shared) => {
        seen.push(await request.body());
        return { ok: true, tiers: shared.tiers };
      },
    }],
  });
  const [route] = pluginAdminRoutes([plugin], {} as PluginServices, new Map([['tiers', { tiers: 3 }]]));
  const request = (body: unknown) => ({ scope: { actor: 'admin', tenantId: null }, params: { id: 't1' }, query: {}, body: async () => body });
  await assert.rejects(route!.handle(request({ tier: 0 })), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.deepEqual(err.details, [{ path: '/tier', message: 'must be >= 1' }]);
    return true;
  });
  await assert.rejects(route!.handle(request({ tier: 2, extra: true })), /VALIDATION_ERROR|extra/);
  assert.deepEqual(await route!.handle(request({ tier: 2 })), { ok: true, tiers: 3 });
  assert.deepEqual(seen, [{ tier: 2 }]);
});
