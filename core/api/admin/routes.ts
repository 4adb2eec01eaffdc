/**
 * The admin API's routes as data: the router serves them and /openapi.json documents them, from the same
 * schemas that validate their bodies.
 */
import { listSchema, type JsonSchema } from '../../json-schema.ts';
import type { ApiKeyService } from '../../identity/api-keys.ts';
import type { AdminRequest, AdminRouteDescription } from '../../pipeline/routes.ts';
import type { Directory } from '../../identity/directory.ts';
import type { JwtRevocations } from '../../identity/jwt.ts';
import { policySchema } from '../../identity/policy.ts';
import {
  apiKeyRecordSchema, createApiKeySchema, createDepartmentSchema, createOrganizationSchema, createTenantSchema, jwtRevocationSchema,
  updateApiKeySchema,
} from '../../identity/schemas.ts';
import { pageRequest } from '../../store/pagination.ts';
import { providerSummarySchema, type ProviderSummaries } from './providers.ts';

export interface AdminDeps {
  apiKeys: ApiKeyService;
  directory: Directory;
  revocations: JwtRevocations;
  /** The configured providers with their breakers' states on this instance (./providers.ts). */
  providers: ProviderSummaries;
}

export type { AdminRequest };

export interface AdminRoute extends AdminRouteDescription {
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
    method: 'PATCH', path: '/keys/:id', status: 200, requestSchema: updateApiKeySchema, responseSchema: apiKeyRecordSchema,
    summary: "Change an API key's rate limits, allowed addresses, capabilities, expiry, name or metadata; every instance sharing the KV applies them from its next request.",
    handle: async (r, d) => d.apiKeys.update(r.params.id!, await r.body(), r.scope),
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
    method: 'GET', path: '/providers', status: 200, responseSchema: listSchema(providerSummarySchema),
    summary: 'List the configured providers, the models routed to each, and the states of their circuit breakers on the instance that answers.',
    handle: async (_r, d) => d.providers(),
  },
];
