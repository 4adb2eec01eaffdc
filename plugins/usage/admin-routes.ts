/**
 * GET /admin/v1/usage: the usage of the whole deployment (every tenant), or of one tenant, with the grouping,
 * window and paging of GET /v1/usage (endpoint.ts builds the query for both). A tenant-limited admin credential
 * sees its own tenant only, and is refused another's.
 */
import { validationError } from '../../core/errors.ts';
import type { AdminScope, PluginAdminRoute } from '../../core/pipeline/routes.ts';
import { outOfScope } from '../../core/identity/directory.ts';
import { usageListSchema, usagePage, usageQuery, type RecordScope } from './endpoint.ts';

/** The records an admin may read: its tenant's when it is tenant-limited, else all or the one asked for. */
export function adminRecordScope(scope: AdminScope, requested: string | string[] | undefined): RecordScope {
  if (Array.isArray(requested)) throw validationError([{ path: '/tenantId', message: 'must be given once' }]);
  if (scope.tenantId !== null && requested !== undefined && requested !== scope.tenantId) throw outOfScope(requested);
  const tenantId = scope.tenantId ?? requested;
  return tenantId === undefined ? { where: [], params: [] } : { where: ['tenant_id = $1'], params: [tenantId] };
}

export const usageAdminRoutes: PluginAdminRoute[] = [
  {
    method: 'GET', path: '/usage', status: 200, responseSchema: usageListSchema,
    summary: 'Usage of the whole deployment, or of one tenant, summed per group over a window: requests, tokens, units and cost.',
    filters: {
      tenantId: 'Only this tenant\'s usage (a tenant-limited admin sees its own tenant only). Repeat it with each cursor.',
      from: 'Start of the window (inclusive): ISO 8601 or unix seconds; default 30 days before `to`.',
      to: 'End of the window (exclusive): ISO 8601 or unix seconds; default now.',
      group_by: 'Comma list of model, provider, key, day, modality; without it one row sums the window.',
      limit: 'Rows per page, 1 to 100 (default 20).',
      cursor: 'next_cursor of the previous page.',
    },
    handle: async (r, services) => usagePage(services.db, adminRecordScope(r.scope, r.query.tenantId), usageQuery(r.query, services.clock.now())),
  },
];
