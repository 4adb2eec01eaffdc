/** Who calls a batch endpoint, as a batch record keeps it, and the webhook URL checked with the outbound rules. */
import { validationError } from '../errors.ts';
import type { LocalEndpointDeps } from '../ingress/endpoint.ts';
import { checkUrl, compileOutboundPolicy, OutboundRefusedError } from '../outbound/policy.ts';
import type { GatewayContext } from '../pipeline/context.ts';

export type BatchCaller = ReturnType<typeof callerOf>;

export function callerOf(ctx: GatewayContext) {
  const caller = ctx.state.gw.caller;
  return {
    tenantId: caller?.tenantId ?? 'default',
    callerKind: caller?.kind ?? 'api_key',
    apiKeyId: caller?.kind === 'api_key' ? caller.id : null,
    userId: caller?.kind === 'jwt' ? caller.id : null,
    organizationId: caller?.organizationId ?? null,
    departmentId: caller?.departmentId ?? null,
  };
}

export function webhookUrl(deps: LocalEndpointDeps, url: string | null): string | null {
  if (url === null) return null;
  try {
    return checkUrl(url, compileOutboundPolicy(deps.config.outbound)).href;
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw validationError([{ path: '/completion_webhook_url', message: `is refused: ${err.reason}` }]);
    throw err;
  }
}
