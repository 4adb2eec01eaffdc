/**
 * GET /v1/budget (capability budget:read): every budget that applies to the caller (its tenant's deployment
 * budgets, its organization's, its department's and, for an API key, the key's own) with what each has spent in
 * its current period. `spent_usd` includes what requests in flight have reserved. Periods follow the gateway's
 * clock in UTC; `period_start` and `resets_at` are ISO 8601 (UTC), both null for a total budget.
 */
import type { BudgetService } from './budgets.ts';
import { reservationOrder } from './ledger.ts';
import { BUDGET_PERIODS, BUDGET_SCOPES, periodEnd, periodStart, usd } from './periods.ts';
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError } from '../../core/errors.ts';
import type { PluginEndpoint } from '../../core/pipeline/routes.ts';

export interface BudgetObject {
  id: string;
  object: 'budget';
  scope: string;
  scope_id: string | null;
  period: string;
  limit_usd: number;
  spent_usd: number;
  remaining_usd: number;
  period_start: string | null;
  resets_at: string | null;
}

export const budgetListSchema: JsonSchema = {
  type: 'object', required: ['object', 'data'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object', required: ['id', 'object', 'scope', 'scope_id', 'period', 'limit_usd', 'spent_usd', 'remaining_usd', 'period_start', 'resets_at'],
        properties: {
          id: { type: 'string' },
          object: { type: 'string', enum: ['budget'] },
          scope: { type: 'string', enum: [...BUDGET_SCOPES] },
          scope_id: { type: 'string', nullable: true, description: 'The organization, department or key id; null for the deployment (the caller\'s tenant).' },
          period: { type: 'string', enum: [...BUDGET_PERIODS] },
          limit_usd: { type: 'number' },
          spent_usd: { type: 'number', description: 'Spent this period, including what requests in flight have reserved.' },
          remaining_usd: { type: 'number', description: 'limit_usd - spent_usd, never below 0.' },
          period_start: { type: 'string', nullable: true, description: 'When this period began (ISO 8601, UTC); null for total.' },
          resets_at: { type: 'string', nullable: true, description: 'When the next period begins (ISO 8601, UTC); null for total.' },
        },
      },
    },
  },
};

export const budgetEndpoint: PluginEndpoint<BudgetService> = {
  method: 'GET',
  path: '/v1/budget',
  capability: 'budget:read',
  summary: 'Every budget that applies to the caller, with what it has spent and what remains this period.',
  errorEnvelope: 'canonical',
  responses: { '200': { description: 'A list of budgets, in the order requests reserve on them.', schema: budgetListSchema } },
  handler({ clock }, budgets) {
    return async (ctx) => {
      const caller = ctx.state.gw.caller;
      if (!caller) throw new GatewayError('AUTH_REQUIRED', 'Authentication required: send Authorization: Bearer <API key>');
      const now = clock.now();
      const applicable = [...(await budgets.applicable(caller))].sort(reservationOrder);
      const data = await Promise.all(applicable.map(async (budget): Promise<BudgetObject> => {
        const spent = Math.max(await budgets.ledger.spentMicros(budget, now), 0);
        const start = periodStart(budget.period, now);
        const end = periodEnd(budget.period, start);
        return {
          id: budget.id,
          object: 'budget',
          scope: budget.scope,
          scope_id: budget.scopeId,
          period: budget.period,
          limit_usd: usd(budget.limitMicros),
          spent_usd: usd(spent),
          remaining_usd: usd(Math.max(budget.limitMicros - spent, 0)),
          period_start: end === null ? null : new Date(start).toISOString(),
          resets_at: end === null ? null : new Date(end).toISOString(),
        };
      }));
      ctx.body = { object: 'list', data };
    };
  },
};
