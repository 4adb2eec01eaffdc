/**
 * auth: who is calling, and may they call this endpoint. The credential is an API key or a JWT (see
 * core/identity/authenticate.ts); the endpoint's capability must be among the caller's. Runs before the body is read.
 */
import { GatewayError } from '../../core/errors.ts';
import { presentedCredential } from '../../core/identity/authenticate.ts';
import { refuseCrossSiteCookieWrite } from '../../core/identity/cross-site.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';

export default definePlugin<Record<string, never>>({
  name: 'auth',
  description: 'Authenticates the caller (API key or JWT) and checks the capability the endpoint needs.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  provides: ['caller'],
  setup(_config, services) {
    return async (ctx, next) => {
      const gw = ctx.state.gw;
      const authorization = ctx.get('authorization') || undefined;
      const credential = presentedCredential({
        authorization,
        apiKey: ctx.get('x-api-key') || undefined,
        // Read only when it could count (Authorization wins over it): Koa parses the cookies on first use.
        accessTokenCookie: authorization ? undefined : ctx.cookies.get('access_token'),
      });
      if (!credential) {
        throw new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <API key or JWT>, x-api-key, or the access_token cookie');
      }
      // A JWT without Authorization came from the cookie (x-api-key carries keys only), which browsers send cross-site.
      if (credential.kind === 'jwt' && authorization === undefined) refuseCrossSiteCookieWrite(ctx);
      // Answered within the call when the key is cached in process: no promise for most requests.
      const caller = services.identity.authenticateNow?.(credential) ?? await services.identity.authenticate(credential);
      const needed = gw.endpoint.capability;
      if (needed && !caller.capabilities.includes(needed)) {
        const who = caller.kind === 'api_key' ? 'API key' : 'JWT caller';
        throw new GatewayError('AUTH_FORBIDDEN', `${who} lacks the "${needed}" capability required by ${gw.endpoint.path}`, { requiredCapability: needed });
      }
      gw.caller = caller;
      await next();
    };
  },
});
