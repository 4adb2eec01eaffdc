/**
 * Cursor pagination for every list endpoint: `limit` (default 20, 1 to 100; anything else is refused, not
 * clamped) and an opaque `cursor`; the answer is {object: list, data, has_more, next_cursor}. Rows are ordered by
 * (created_at, id); the cursor holds the last row's exact microsecond timestamp and id.
 */
import { validationError } from '../errors.ts';
import type { Queryable } from './database.ts';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface PageRequest {
  limit: number;
  after: { micros: string; id: string } | null;
}

export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw validationError([{ path: `/${name}`, message: 'must be given once' }]);
  return value;
}

export function pageRequest(query: Query): PageRequest {
  const limitText = single(query, 'limit');
  const cursor = single(query, 'cursor');
  let limit = DEFAULT_PAGE_SIZE;
  if (limitText !== undefined) {
    if (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_PAGE_SIZE) {
      throw validationError([{ path: '/limit', message: `must be an integer from 1 to ${MAX_PAGE_SIZE}` }]);
    }
    limit = Number(limitText);
  }
  return { limit, after: cursor === undefined ? null : decodeCursor(cursor) };
}

function decodeCursor(cursor: string): PageRequest['after'] {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^(\d{1,20})\.(.+)$/s.exec(text);
  // A forged cursor must not reach the database as a timestamp out of range or a text Postgres refuses (U+0000):
  // both would fail the query (500). Real cursors hold a safe-integer timestamp and an id without NUL.
  if (!match || !Number.isSafeInteger(Number(match[1])) || match[2]!.includes('\u0000')) {
    throw validationError([{ path: '/cursor', message: 'is not a cursor this endpoint returned' }]);
  }
  return { micros: match[1]!, id: match[2]! };
}

interface CursorRow {
  id: string;
  page_micros: string;
}

/**
 * One page of `table` under the given conditions ($1.. in `where` refer to `params`). The table must have
 * `id` and `created_at` columns; `table` and `where` are the caller's constants, never user input.
 */
export async function listPage<Row extends { id: string }, T>(
  db: Queryable,
  spec: { table: string; where: string[]; params: unknown[]; page: PageRequest; toItem: (row: Row) => T },
): Promise<Page<T>> {
  const where = [...spec.where];
  const params = [...spec.params];
  if (spec.page.after) {
    params.push(spec.page.after.micros, spec.page.after.id);
    where.push(`(created_at, id) > ('epoch'::timestamptz + $${params.length - 1}::bigint * interval '1 microsecond', $${params.length})`);
  }
  params.push(spec.page.limit + 1);
  const rows = await db.query<Row & CursorRow>(
    `SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint::text AS page_micros FROM ${spec.table}
     ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at, id LIMIT $${params.length}`,
    params,
  );
  const hasMore = rows.length > spec.page.limit;
  const kept = hasMore ? rows.slice(0, spec.page.limit) : rows;
  const last = kept.at(-1);
  return {
    object: 'list',
    data: kept.map(spec.toItem),
    has_more: hasMore,
    next_cursor: hasMore && last ? Buffer.from(`${last.page_micros}.${last.id}`).toString('base64url') : null,
  };
}
