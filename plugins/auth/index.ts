/**
 * auth: who is calling. API keys from `Authorization: Bearer` or `x-api-key` (Authorization wins), checked
 * for status, expiry and the endpoint's capability. Runs before the body is read.
 */
import { GatewayError } from '../../core/errors.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';
import { KEY_PREFIX } from '../../core/identity/api-keys.ts';

interface AuthPluginConfig {
  [key: string]: never;
}

function presentedCredential(authorization: string | undefined, apiKeyHeader: string | undefined): string | null {
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new GatewayError('AUTH_INVALID_API_KEY', 'Authorization header must be "Bearer <credential>"');
    return match[1]!;
  }
  return apiKeyHeader?.trim() || null;
}

export default definePlugin<AuthPluginConfig>({
  name: 'auth',
  description: 'Authenticates the caller with an API key and checks the capability the endpoint needs.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  setup(_config, services) {
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      const credential = presentedCredential(ctx.get('authorization') || undefined, ctx.get('x-api-key') || undefined);
      if (!credential) throw new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <API key>');
      if (!credential.startsWith(KEY_PREFIX)) {
        if (credential.split('.').length === 3) throw new GatewayError('AUTH_INVALID_TOKEN', 'JWT authentication is not enabled on this gateway');
        throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
      }
      const key = await services.apiKeys.lookup(credential);
      if (!key) throw new GatewayError('AUTH_INVALID_API_KEY', 'Invalid API key');
      if (key.status === 'revoked') throw new GatewayError('AUTH_API_KEY_REVOKED', 'API key has been revoked');
      if (key.status === 'expired' || (key.expiresAt !== null && Date.parse(key.expiresAt) <= services.clock.now())) {
        if (key.status === 'active') await services.apiKeys.markExpired(key);
        throw new GatewayError('AUTH_API_KEY_EXPIRED', 'API key has expired');
      }
      const needed = gw.endpoint.capability;
      if (needed && !key.scopes.capabilities.includes(needed)) {
        throw new GatewayError('AUTH_FORBIDDEN', `API key lacks the "${needed}" capability required by ${gw.endpoint.path}`, { requiredCapability: needed });
      }
      gw.caller = {
        kind: 'api_key',
        id: key.id,
        tenantId: key.tenantId,
        organizationId: null,
        departmentId: null,
        capabilities: key.scopes.capabilities,
      };
      await next();
    };
  },
});
