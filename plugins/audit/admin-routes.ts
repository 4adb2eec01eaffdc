/**
 * GET /admin/v1/audit (a page of records, oldest first, by seq) and GET /admin/v1/audit/export (every matching
 * record as NDJSON, streamed page by page). Same filters; an admin limited to a tenant sees that tenant's
 * records only. Each item is {seq, prevHash, hash, record}: canonicalJson(record) is the hashed content.
 */
import { validationError } from '../../core/errors.ts';
import type { PluginQueryable } from '../../core/pipeline/services.ts';
import type { AdminRequest, PluginAdminRoute } from '../../core/pipeline/routes.ts';
import { pageRequest } from '../../core/store/pagination.ts';
import { DATE_TIME_RANGE } from '../../core/validation.ts';

const FILTERS: Record<string, string> = {
  from: 'Only records of requests that arrived at or after this time (ISO 8601).',
  to: 'Only records of requests that arrived before this time (ISO 8601).',
  tenantId: 'Only records of this tenant.',
  apiKeyId: 'Only records of this API key.',
  route: 'Only records of this route (`/v1/chat/completions`, or an admin route pattern).',
  status: 'Only records answered with this HTTP status.',
  requestId: 'Only records of this request id.',
  kind: '`request` (data plane) or `admin` (admin API writes).',
};

const itemSchema = {
  type: 'object', required: ['seq', 'prevHash', 'hash', 'record'],
  properties: {
    seq: { type: 'integer', description: 'Position in the chain.' },
    prevHash: { type: 'string', description: 'Hash of the record before (64 zeros for the first).' },
    hash: { type: 'string', description: 'SHA-256 of prevHash, a newline, and canonicalJson(record).' },
    record: { type: 'object', description: 'The record: see docs/audit.md.' },
  },
};

interface Row {
  seq: string;
  content: string;
  prev_hash: string;
  hash: string;
}

const one = (request: AdminRequest, name: string): string | undefined => {
  const value = request.query[name];
  if (Array.isArray(value)) throw validationError([{ path: `/${name}`, message: 'must be given once' }]);
  return value === '' ? undefined : value;
};

function time(request: AdminRequest, name: string): string | undefined {
  const value = one(request, name);
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  // In range as every date-time the gateway takes: Postgres refuses year 0000, which Date reads.
  const inRange = ms >= DATE_TIME_RANGE.min && ms < DATE_TIME_RANGE.max;
  if (!inRange || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw validationError([{ path: `/${name}`, message: 'must be an ISO 8601 date-time from 1970 to 9999' }]);
  return new Date(ms).toISOString();
}

/** The WHERE conditions of the filters and of the admin's tenant scope. */
function conditions(request: AdminRequest): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    params.push(value);
    where.push(sql.replace('?', `$${params.length}`));
  };
  const from = time(request, 'from');
  const to = time(request, 'to');
  if (from) add('occurred_at >= ?::timestamptz', from);
  if (to) add('occurred_at < ?::timestamptz', to);
  const status = one(request, 'status');
  if (status !== undefined) {
    if (!/^[1-5]\d\d$/.test(status)) throw validationError([{ path: '/status', message: 'must be an HTTP status (100-599)' }]);
    add('status = ?', Number(status));
  }
  const kind = one(request, 'kind');
  if (kind !== undefined && kind !== 'request' && kind !== 'admin') throw validationError([{ path: '/kind', message: 'must be request or admin' }]);
  if (kind) add('kind = ?', kind);
  for (const [name, column] of [['tenantId', 'tenant_id'], ['apiKeyId', 'api_key_id'], ['route', 'route'], ['requestId', 'request_id']] as const) {
    const value = one(request, name);
    if (value !== undefined) add(`${column} = ?`, value);
  }
  if (request.scope.tenantId !== null) add('tenant_id = ?', request.scope.tenantId);
  return { where, params };
}

function cursorSeq(request: AdminRequest): number {
  const cursor = one(request, 'cursor');
  if (cursor === undefined) return 0;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^seq:\d{1,18}$/.test(text)) throw validationError([{ path: '/cursor', message: 'is not a cursor this endpoint returned' }]);
  return Number(text.slice(4));
}

async function page(db: PluginQueryable, filter: { where: string[]; params: unknown[] }, after: number, limit: number): Promise<Row[]> {
  const params = [...filter.params, after, limit];
  const where = [...filter.where, `seq > $${params.length - 1}`];
  return db.query<Row>(
    `SELECT seq::text AS seq, content, prev_hash, hash FROM audit_records WHERE ${where.join(' AND ')} ORDER BY audit_records.seq LIMIT $${params.length}`,
    params,
  );
}

const item = (row: Row) => ({ seq: Number(row.seq), prevHash: row.prev_hash, hash: row.hash, record: JSON.parse(row.content) as unknown });

export function auditAdminRoutes<Shared>(): Array<PluginAdminRoute<Shared>> {
  return [
    {
      method: 'GET', path: '/audit', status: 200, list: true, filters: FILTERS, responseSchema: itemSchema,
      summary: 'List audit records, oldest first (by their place in the chain).',
      handle: async (request, services) => {
        const { limit } = pageRequest({ limit: one(request, 'limit') });
        const rows = await page(services.db, conditions(request), cursorSeq(request), limit + 1);
        const data = rows.slice(0, limit).map(item);
        const more = rows.length > limit;
        return { object: 'list', data, has_more: more, next_cursor: more ? Buffer.from(`seq:${data.at(-1)!.seq}`).toString('base64url') : null };
      },
    },
    {
      method: 'GET', path: '/audit/export', status: 200, stream: 'ndjson', filters: FILTERS, responseSchema: itemSchema,
      summary: 'Export audit records as NDJSON, oldest first, streamed: one {seq, prevHash, hash, record} per line.',
      handle: async (request, services) => {
        const filter = conditions(request);
        let after = cursorSeq(request);
        return (async function* () {
          for (;;) {
            const rows = await page(services.db, filter, after, 1000);
            for (const row of rows) yield item(row);
            if (rows.length < 1000) return;
            after = Number(rows.at(-1)!.seq);
          }
        })();
      },
    },
  ];
}
