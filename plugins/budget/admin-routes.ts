/** The budget plugin's admin routes under /admin/v1: create, list, read, change and delete budgets. */
import { pageRequest } from '../../core/store/pagination.ts';
import type { PluginAdminRoute } from '../../core/pipeline/routes.ts';
import type { BudgetService } from './budgets.ts';
import { budgetRecordSchema, createBudgetSchema, deletedBudgetSchema, updateBudgetSchema } from './schemas.ts';

export const budgetAdminRoutes: Array<PluginAdminRoute<BudgetService>> = [
  {
    method: 'POST', path: '/budgets', status: 201, requestSchema: createBudgetSchema, responseSchema: budgetRecordSchema,
    summary: 'Create a USD budget for a deployment (tenant), organization, department or API key, per day, month or in total.',
    handle: async (r, _services, budgets) => budgets.create(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/budgets', status: 200, list: true, responseSchema: budgetRecordSchema, summary: 'List budgets.',
    filters: { tenantId: 'Only budgets of this tenant.', scope: 'Only budgets of this scope (deployment, organization, department, key).', scopeId: 'Only budgets of this organization, department or key.' },
    handle: (r, _services, budgets) => budgets.list(pageRequest(r.query), r.scope, r.query),
  },
  {
    method: 'GET', path: '/budgets/:id', status: 200, responseSchema: budgetRecordSchema,
    summary: 'Fetch one budget with what it has spent and what remains in the current period.',
    handle: (r, _services, budgets) => budgets.get(r.params.id!, r.scope),
  },
  {
    method: 'PUT', path: '/budgets/:id', status: 200, requestSchema: updateBudgetSchema, responseSchema: budgetRecordSchema,
    summary: "Change a budget's limit; it holds at once, for the current period's spend too.",
    handle: async (r, _services, budgets) => budgets.setLimit(r.params.id!, await r.body(), r.scope),
  },
  {
    method: 'DELETE', path: '/budgets/:id', status: 200, responseSchema: deletedBudgetSchema,
    summary: 'Delete a budget; requests are no longer checked against it.',
    handle: (r, _services, budgets) => budgets.delete(r.params.id!, r.scope),
  },
];
