/**
 * ip-allow: refuses a caller whose address is outside its key's allowedIps (spec: Authentication, item 5).
 * Reads gw.caller, so it runs after auth (it requires "caller", which auth provides), and gw.clientIp, which the core
 * resolves from the socket peer or, with server.trustProxy, from X-Forwarded-For.
 */
import { GatewayError } from '../../core/errors.ts';
import { compileAddressList } from '../../core/identity/addresses.ts';
import { definePlugin } from '../../core/pipeline/plugin.ts';

interface IpAllowPluginConfig {
  [key: string]: never;
}

type Matcher = (address: string) => boolean;

/** Compiled lists per pipeline entry. Keys tend to share a few lists; the bound caps memory when they do not. */
const CACHE_LIMIT = 1000;

export default definePlugin<IpAllowPluginConfig>({
  name: 'ip-allow',
  description: "Refuses callers whose address is not in their API key's allowedIps; an empty list allows every address.",
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  requires: ['caller'],
  setup() {
    const matchers = new Map<string, Matcher>();
    // A cached key's record is shared by its requests (core/store/parsed-texts.ts): its list is the same array.
    const byList = new WeakMap<readonly string[], Matcher>();
    const matcherFor = (entries: readonly string[]): Matcher => {
      const known = byList.get(entries);
      if (known) return known;
      const cacheKey = JSON.stringify(entries);
      let matcher = matchers.get(cacheKey);
      if (!matcher) {
        if (matchers.size >= CACHE_LIMIT) matchers.delete(matchers.keys().next().value!);
        matcher = compileAddressList(entries);
        matchers.set(cacheKey, matcher);
      }
      byList.set(entries, matcher);
      return matcher;
    };

    return (ctx, next) => {
      const gw = ctx.state.gw;
      // The config rule keeps auth ahead of this plugin; should a caller still be missing, refuse rather than allow.
      if (!gw.caller) return Promise.reject(new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <API key>'));
      const allowed = gw.caller.allowedIps;
      if (allowed.length > 0 && !matcherFor(allowed)(gw.clientIp)) {
        return Promise.reject(new GatewayError('AUTH_FORBIDDEN', `Client address ${gw.clientIp} is not allowed for this API key`, { reason: 'ip_not_allowed', clientIp: gw.clientIp }));
      }
      return next();
    };
  },
});
