/**
 * The admin API's routes as data: the router serves them and /openapi.json documents them, from the same
 * schemas that validate their bodies.
 */
import type { BudgetService } from '../../budget/budgets.ts';
import { budgetRecordSchema, createBudgetSchema, deletedBudgetSchema, updateBudgetSchema } from '../../budget/schemas.ts';
import type { JsonSchema } from '../../config/schema.ts';
import type { ApiKeyService } from '../../identity/api-keys.ts';
import type { AdminScope } from '../../identity/audit.ts';
import type { Directory } from '../../identity/directory.ts';
import type { JwtRevocations } from '../../identity/jwt.ts';
import { policySchema } from '../../identity/policy.ts';
import {
  apiKeyRecordSchema, createApiKeySchema, createDepartmentSchema, createOrganizationSchema, createTenantSchema, jwtRevocationSchema,
} from '../../identity/schemas.ts';
import { pageRequest } from '../pagination.ts';

export interface AdminDeps {
  apiKeys: ApiKeyService;
  directory: Directory;
  revocations: JwtRevocations;
  budgets: BudgetService;
}

export interface AdminRequest {
  scope: AdminScope;
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  /** Reads and parses the JSON body (1 MiB at most). */
  body(): Promise<unknown>;
}

export interface AdminRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Under /admin/v1, in the router's `:param` form. */
  path: string;
  summary: string;
  status: 200 | 201;
  requestSchema?: JsonSchema;
  responseSchema?: JsonSchema;
  /** Query parameters besides limit and cursor, with what they mean. */
  filters?: Record<string, string>;
  list?: boolean;
  handle(request: AdminRequest, deps: AdminDeps): Promise<unknown>;
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export const adminRoutes: AdminRoute[] = [
  {
    method: 'POST', path: '/tenants', status: 201, summary: 'Create a tenant (a deployment); deployment-wide admins only.',
    requestSchema: createTenantSchema,
    handle: async (r, d) => d.directory.createTenant(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/tenants', status: 200, list: true, summary: 'List tenants.',
    handle: (r, d) => d.directory.listTenants(pageRequest(r.query), r.scope),
  },
  {
    method: 'POST', path: '/keys', status: 201, summary: 'Create an API key; the plaintext key is in the response, once.',
    requestSchema: createApiKeySchema, responseSchema: apiKeyRecordSchema,
    handle: async (r, d) => d.apiKeys.create(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/keys', status: 200, list: true, summary: 'List API keys (never their plaintext).',
    filters: { tenantId: 'Only keys of this tenant.' },
    handle: (r, d) => {
      const tenantId = single(r.query.tenantId);
      return d.apiKeys.listPage(pageRequest(r.query), r.scope, tenantId ? { tenantId } : {});
    },
  },
  {
    method: 'GET', path: '/keys/:id', status: 200, summary: 'Fetch one API key record.', responseSchema: apiKeyRecordSchema,
    handle: (r, d) => d.apiKeys.get(r.params.id!, r.scope),
  },
  {
    method: 'POST', path: '/keys/:id/revoke', status: 200, responseSchema: apiKeyRecordSchema,
    summary: 'Revoke an API key; every instance sharing the KV refuses it at once. Revoking twice is harmless.',
    handle: (r, d) => d.apiKeys.revoke(r.params.id!, r.scope),
  },
  {
    method: 'POST', path: '/organizations', status: 201, summary: 'Create an organization in a tenant.',
    requestSchema: createOrganizationSchema,
    handle: async (r, d) => d.directory.createOrganization(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/organizations', status: 200, list: true, summary: 'List organizations.',
    filters: { tenantId: 'Only organizations of this tenant.' },
    handle: (r, d) => {
      const tenantId = single(r.query.tenantId);
      return d.directory.listOrganizations(pageRequest(r.query), r.scope, tenantId ? { tenantId } : {});
    },
  },
  {
    method: 'GET', path: '/organizations/:id', status: 200, summary: 'Fetch one organization with its policy.',
    handle: (r, d) => d.directory.getOrganization(r.params.id!, r.scope),
  },
  {
    method: 'PUT', path: '/organizations/:id/policy', status: 200, requestSchema: policySchema,
    summary: "Replace an organization's policy: model allow-list, model overrides, rate limits. It narrows deployment settings.",
    handle: async (r, d) => d.directory.setPolicy('organization', r.params.id!, await r.body(), r.scope),
  },
  {
    method: 'POST', path: '/departments', status: 201, summary: 'Create a department in an organization.',
    requestSchema: createDepartmentSchema,
    handle: async (r, d) => d.directory.createDepartment(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/departments', status: 200, list: true, summary: 'List departments.',
    filters: { organizationId: 'Only departments of this organization.' },
    handle: (r, d) => {
      const organizationId = single(r.query.organizationId);
      return d.directory.listDepartments(pageRequest(r.query), r.scope, organizationId ? { organizationId } : {});
    },
  },
  {
    method: 'GET', path: '/departments/:id', status: 200, summary: 'Fetch one department with its policy.',
    handle: (r, d) => d.directory.getDepartment(r.params.id!, r.scope),
  },
  {
    method: 'PUT', path: '/departments/:id/policy', status: 200, requestSchema: policySchema,
    summary: "Replace a department's policy; it narrows its organization's and never widens it.",
    handle: async (r, d) => d.directory.setPolicy('department', r.params.id!, await r.body(), r.scope),
  },
  {
    method: 'POST', path: '/jwt/revocations', status: 201, requestSchema: jwtRevocationSchema,
    summary: 'Put a JWT id on the blocklist: tokens carrying it are refused from now on, on every instance sharing the KV.',
    handle: async (r, d) => d.revocations.revoke(await r.body(), r.scope),
  },
  {
    method: 'POST', path: '/budgets', status: 201, requestSchema: createBudgetSchema, responseSchema: budgetRecordSchema,
    summary: 'Create a USD budget for a deployment (tenant), organization, department or API key, per day, month or in total.',
    handle: async (r, d) => d.budgets.create(await r.body(), r.scope),
  },
  {
    method: 'GET', path: '/budgets', status: 200, list: true, responseSchema: budgetRecordSchema, summary: 'List budgets.',
    filters: { tenantId: 'Only budgets of this tenant.', scope: 'Only budgets of this scope (deployment, organization, department, key).', scopeId: 'Only budgets of this organization, department or key.' },
    handle: (r, d) => d.budgets.list(pageRequest(r.query), r.scope, r.query),
  },
  {
    method: 'GET', path: '/budgets/:id', status: 200, responseSchema: budgetRecordSchema,
    summary: 'Fetch one budget with what it has spent and what remains in the current period.',
    handle: (r, d) => d.budgets.get(r.params.id!, r.scope),
  },
  {
    method: 'PUT', path: '/budgets/:id', status: 200, requestSchema: updateBudgetSchema, responseSchema: budgetRecordSchema,
    summary: "Change a budget's limit; it holds at once, for the current period's spend too.",
    handle: async (r, d) => d.budgets.setLimit(r.params.id!, await r.body(), r.scope),
  },
  {
    method: 'DELETE', path: '/budgets/:id', status: 200, responseSchema: deletedBudgetSchema,
    summary: 'Delete a budget; requests are no longer checked against it.',
    handle: (r, d) => d.budgets.delete(r.params.id!, r.scope),
  },
];
