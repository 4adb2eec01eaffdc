/**
 * Who made a request, as the records it leaves keep it (batches, stored responses): the tenant (the default one
 * when the pipeline authenticates nobody), the key or JWT subject, organization and department.
 */
import type { GatewayContext } from './context.ts';

export type RecordedCaller = ReturnType<typeof callerOf>;

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
