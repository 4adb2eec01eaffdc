/**
 * GET /v1/usage (capability usage:read): the usage records of a window, summed per group.
 *
 * - `from`, `to`: ISO 8601 (a date, or a date-time; without an offset it is UTC) or unix seconds. The window is
 *   [from, to) on the time each request arrived. Defaults: `to` now, `from` 30 days before `to`. `to` must be
 *   after `from`.
 * - `group_by`: a comma list of `model` (the configured model the request resolved to), `provider`, `key` (the
 *   API key id; null for JWT callers), `day` (UTC, YYYY-MM-DD) and `modality` (chat, completion, embeddings,
 *   rerank, ...). Rows are ordered by the groups in the order
 *   given (nulls last). Without it, one row sums the whole window.
 * - `limit` (1-100, default 20) and `cursor`, as every list endpoint. A cursor carries its query's window and
 *   groups: the next pages are of the same query, even with the default `to`.
 *
 * Rows sum tokens and search units (rerank's billing unit) beside the cost, and `requests` counts requests: a
 * record of work metered as a whole (a batch) stands for its request lines.
 *
 * Scope: an API key sees its own records; a JWT caller its own (its subject), and a JWT with role `admin` its whole
 * tenant. Records are written in batches (plugins/usage): a request shows here once its batch is written, within
 * the plugin's flushIntervalMs.
 */
import type { JsonSchema } from '../../core/json-schema.ts';
import { GatewayError, validationError } from '../../core/errors.ts';
import type { PluginEndpoint } from '../../core/pipeline/routes.ts';
import type { Caller } from '../../core/pipeline/context.ts';
import type { PluginQueryable as Queryable } from '../../core/pipeline/services.ts';
import { pageRequest } from '../../core/store/pagination.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_MS = 30 * DAY_MS;

const GROUPS = {
  model: { expr: 'model', nullable: true },
  provider: { expr: 'provider', nullable: true },
  key: { expr: 'api_key_id', nullable: true },
  day: { expr: `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`, nullable: false },
  modality: { expr: 'modality', nullable: false },
} as const;

export type UsageGroup = keyof typeof GROUPS;
const GROUP_NAMES = Object.keys(GROUPS) as UsageGroup[];

export interface UsageRow {
  model?: string | null;
  provider?: string | null;
  key?: string | null;
  day?: string;
  modality?: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  /** Rerank's billing unit: one query with up to 100 documents. */
  search_units: number;
  /** Transcription and translation: seconds of audio heard. */
  audio_seconds: number;
  /** Speech: characters of input spoken. */
  characters: number;
  /** Image generation: images made. */
  images: number;
  /** Video generation: seconds of video made. */
  video_seconds: number;
  /** Requests a guard refused (a block verdict in the record's guard_verdicts). */
  guard_blocked: number;
  /** Requests in which a guard redacted something, in the prompt or the answer. */
  guard_redacted: number;
  /** Sum of the priced records; null when no record of the group had a price. */
  cost_usd: number | null;
}

export interface UsageQuery {
  from: number;
  to: number;
  groups: UsageGroup[];
  limit: number;
  after: Array<string | null> | null;
}

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw validationError([{ path: `/${name}`, message: 'must be given once' }]);
  return value;
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** ISO 8601 or unix seconds -> ms since the epoch. A `+` offset arrives as a space when the caller did not encode it. */
export function parseInstant(text: string, name: string): number {
  const fixed = text.replace(/ (\d{2}:?\d{2})$/, '+$1');
  let ms = NaN;
  if (/^\d{1,11}$/.test(fixed)) ms = Number(fixed) * 1000;
  else {
    const match = ISO.exec(fixed);
    // A date-time without an offset is UTC here (JavaScript would read it as local time).
    if (match) ms = Date.parse(fixed.includes('T') && !match[1] ? `${fixed}Z` : fixed);
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > 253_402_300_799_000) {
    throw validationError([{ path: `/${name}`, message: 'must be an ISO 8601 date or date-time, or unix seconds' }]);
  }
  return ms;
}

function parseGroups(text: string | undefined): UsageGroup[] {
  if (text === undefined || text.trim() === '') return [];
  const groups = text.split(',').map((g) => g.trim());
  for (const group of groups) {
    if (!(GROUP_NAMES as string[]).includes(group)) {
      throw validationError([{ path: '/group_by', message: `unknown group ${JSON.stringify(group)} (expected a comma list of ${GROUP_NAMES.join(', ')})` }]);
    }
  }
  if (new Set(groups).size !== groups.length) throw validationError([{ path: '/group_by', message: 'names a group twice' }]);
  return groups as UsageGroup[];
}

interface Cursor {
  g: UsageGroup[];
  f: number;
  t: number;
  k: Array<string | null>;
}

const badCursor = () => validationError([{ path: '/cursor', message: 'is not a cursor this endpoint returned' }]);

function decodeCursor(text: string): Cursor {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  const c = value as Partial<Cursor> | null;
  const ok = c && typeof c === 'object'
    && Array.isArray(c.g) && c.g.length > 0 && c.g.every((g) => (GROUP_NAMES as unknown[]).includes(g)) && new Set(c.g).size === c.g.length
    && Number.isSafeInteger(c.f) && Number.isSafeInteger(c.t) && c.f! >= 0 && c.t! > c.f! && c.t! <= 253_402_300_799_000
    && Array.isArray(c.k) && c.k.length === c.g.length
    && c.k.every((k, i) => (k === null ? GROUPS[c.g![i]!].nullable : typeof k === 'string' && !k.includes('\u0000')));
  if (!ok) throw badCursor();
  return c as Cursor;
}

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify(cursor)).toString('base64url');

/** The query parameters -> a validated query; `now` gives the default window. */
export function usageQuery(query: Query, now: number): UsageQuery {
  const { limit } = pageRequest({ limit: query.limit });
  const fromText = single(query, 'from');
  const toText = single(query, 'to');
  const groupText = single(query, 'group_by');
  const cursorText = single(query, 'cursor');
  const groups = parseGroups(groupText);
  const to = toText === undefined ? undefined : parseInstant(toText, 'to');
  const from = fromText === undefined ? undefined : parseInstant(fromText, 'from');
  if (cursorText !== undefined) {
    const cursor = decodeCursor(cursorText);
    const differs = (groupText !== undefined && groups.join(',') !== cursor.g.join(','))
      || (from !== undefined && from !== cursor.f) || (to !== undefined && to !== cursor.t);
    if (differs) throw validationError([{ path: '/cursor', message: 'belongs to another query (from, to or group_by differ)' }]);
    return { from: cursor.f, to: cursor.t, groups: cursor.g, limit, after: cursor.k };
  }
  const end = to ?? now;
  const start = from ?? end - DEFAULT_WINDOW_MS;
  if (end <= start) throw validationError([{ path: '/to', message: 'must be after from' }]);
  return { from: start, to: end, groups, limit, after: null };
}

/** Which usage records a query covers: SQL conditions over usage_records, with their parameters ($1...). */
export interface RecordScope {
  where: string[];
  params: unknown[];
}

/** Whose records a caller may read. */
export function scopeFor(caller: Caller): RecordScope {
  if (caller.kind === 'api_key') return { where: ['tenant_id = $1', 'api_key_id = $2'], params: [caller.tenantId, caller.id] };
  if (caller.role === 'admin') return { where: ['tenant_id = $1'], params: [caller.tenantId] };
  return { where: ['tenant_id = $1', 'user_id = $2', `caller_kind = 'jwt'`], params: [caller.tenantId, caller.id] };
}

interface SumRow {
  requests: string;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  cached_tokens: string | null;
  reasoning_tokens: string | null;
  total_tokens: string | null;
  search_units: string | null;
  audio_seconds: string | null;
  characters: string | null;
  images: string | null;
  video_seconds: string | null;
  guard_blocked: string | null;
  guard_redacted: string | null;
  cost_usd: string | null;
  [group: `g_${string}`]: string | null;
}

/** One page of usage rows of the records in `scope` (a caller's: scopeFor; an admin's: admin-routes.ts). */
export async function usagePage(db: Queryable, scope: RecordScope, q: UsageQuery) {
  const where = [...scope.where];
  const params = [...scope.params];
  params.push(new Date(q.from).toISOString(), new Date(q.to).toISOString());
  where.push(`created_at >= $${params.length - 1}::timestamptz`, `created_at < $${params.length}::timestamptz`);
  const sums = `sum(requests)::text AS requests, sum(prompt_tokens)::text AS prompt_tokens, sum(completion_tokens)::text AS completion_tokens,
    sum(cached_tokens)::text AS cached_tokens, sum(reasoning_tokens)::text AS reasoning_tokens, sum(total_tokens)::text AS total_tokens,
    sum(search_units)::text AS search_units, sum(audio_seconds)::text AS audio_seconds, sum(characters)::text AS characters,
    sum(images)::text AS images, sum(video_seconds)::text AS video_seconds,
    (sum(requests) FILTER (WHERE guard_verdicts @> '[{"action":"block"}]'::jsonb))::text AS guard_blocked,
    (sum(requests) FILTER (WHERE guard_verdicts @> '[{"action":"redact"}]'::jsonb))::text AS guard_redacted,
    sum(cost_usd)::text AS cost_usd`;
  const columns = q.groups.map((g) => `${GROUPS[g].expr} AS g_${g}`);
  const inner = `SELECT ${[...columns, sums].join(', ')} FROM usage_records WHERE ${where.join(' AND ')}${q.groups.length > 0 ? ` GROUP BY ${q.groups.map((_, i) => i + 1).join(', ')}` : ''}`;

  let sql = inner;
  if (q.groups.length > 0) {
    // Nulls last, then the value in byte order: the same order on PGlite and on any Postgres collation.
    const sortKeys = q.groups.flatMap((g) => (GROUPS[g].nullable ? [`(g_${g} IS NULL)`, `coalesce(g_${g}, '') COLLATE "C"`] : [`g_${g} COLLATE "C"`]));
    const outerWhere: string[] = [];
    if (q.after) {
      const values = q.groups.flatMap((g, i) => {
        const key = q.after![i]!;
        if (!GROUPS[g].nullable) {
          params.push(key);
          return [`$${params.length}::text COLLATE "C"`];
        }
        params.push(key === null);
        params.push(key ?? '');
        return [`$${params.length - 1}::boolean`, `$${params.length}::text COLLATE "C"`];
      });
      outerWhere.push(`(${sortKeys.join(', ')}) > (${values.join(', ')})`);
    }
    params.push(q.limit + 1);
    sql = `SELECT * FROM (${inner}) AS g ${outerWhere.length > 0 ? `WHERE ${outerWhere.join(' AND ')}` : ''} ORDER BY ${sortKeys.join(', ')} LIMIT $${params.length}`;
  }

  const rows = await db.query<SumRow>(sql, params);
  const hasMore = rows.length > q.limit;
  const kept = hasMore ? rows.slice(0, q.limit) : rows;
  const data = kept.map((row) => toUsageRow(row, q.groups));
  const last = kept.at(-1);
  return {
    object: 'list' as const,
    data,
    has_more: hasMore,
    next_cursor: hasMore && last ? encodeCursor({ g: q.groups, f: q.from, t: q.to, k: q.groups.map((g) => last[`g_${g}`] ?? null) }) : null,
    from: new Date(q.from).toISOString(),
    to: new Date(q.to).toISOString(),
    group_by: q.groups,
  };
}

const count = (text: string | null) => (text === null ? 0 : Number(text));

function toUsageRow(row: SumRow, groups: UsageGroup[]): UsageRow {
  const out: Record<string, unknown> = {};
  for (const g of groups) out[g] = row[`g_${g}`] ?? null;
  return {
    ...out,
    requests: count(row.requests),
    prompt_tokens: count(row.prompt_tokens),
    completion_tokens: count(row.completion_tokens),
    cached_tokens: count(row.cached_tokens),
    reasoning_tokens: count(row.reasoning_tokens),
    total_tokens: count(row.total_tokens),
    search_units: count(row.search_units),
    audio_seconds: row.audio_seconds === null ? 0 : Math.round(Number(row.audio_seconds) * 1000) / 1000,
    characters: count(row.characters),
    images: count(row.images),
    video_seconds: row.video_seconds === null ? 0 : Math.round(Number(row.video_seconds) * 1000) / 1000,
    guard_blocked: count(row.guard_blocked),
    guard_redacted: count(row.guard_redacted),
    cost_usd: row.cost_usd === null ? null : Number(Number(row.cost_usd).toFixed(12)),
  };
}

const nullableString = { type: 'string', nullable: true };

export const usageListSchema: JsonSchema = {
  type: 'object', required: ['object', 'data', 'has_more', 'next_cursor', 'from', 'to', 'group_by'],
  properties: {
    object: { type: 'string', enum: ['list'] },
    data: {
      type: 'array',
      items: {
        type: 'object', required: ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'search_units', 'audio_seconds', 'characters', 'images', 'video_seconds', 'guard_blocked', 'guard_redacted', 'cost_usd'],
        properties: {
          model: { ...nullableString, description: 'With group_by model: the configured model the requests resolved to.' },
          provider: { ...nullableString, description: 'With group_by provider.' },
          key: { ...nullableString, description: 'With group_by key: the API key id; null for JWT callers.' },
          day: { type: 'string', description: 'With group_by day: the UTC day, YYYY-MM-DD.' },
          modality: { type: 'string', description: 'With group_by modality: chat, completion (the legacy endpoint), embeddings, rerank, ...' },
          requests: { type: 'integer', description: 'Requests in the group; a batch counts its request lines.' },
          prompt_tokens: { type: 'integer' },
          completion_tokens: { type: 'integer' },
          cached_tokens: { type: 'integer' },
          reasoning_tokens: { type: 'integer' },
          total_tokens: { type: 'integer' },
          search_units: { type: 'integer', description: 'Rerank search units billed (one query with up to 100 documents); 0 for the other modalities.' },
          audio_seconds: { type: 'number', description: 'Seconds of audio heard by transcriptions and translations, whatever their response_format; 0 for the other modalities.' },
          characters: { type: 'integer', description: 'Characters (code points) of input spoken by POST /v1/audio/speech; 0 for the other modalities.' },
          images: { type: 'integer', description: 'Images made by POST /v1/images/generations; 0 for the other modalities.' },
          video_seconds: { type: 'number', description: 'Seconds of video made by completed video jobs; 0 for the other modalities.' },
          guard_blocked: { type: 'integer', description: 'Requests a guard plugin refused (400 GUARD_BLOCKED, or a stream it ended).' },
          guard_redacted: { type: 'integer', description: 'Requests in which a guard plugin redacted something, in the prompt or the answer.' },
          cost_usd: { type: 'number', nullable: true, description: 'Sum over the priced requests; null when none had a price.' },
        },
      },
    },
    has_more: { type: 'boolean' },
    next_cursor: { type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' },
    from: { type: 'string', description: 'Start of the window (inclusive), ISO 8601.' },
    to: { type: 'string', description: 'End of the window (exclusive), ISO 8601.' },
    group_by: { type: 'array', items: { type: 'string', enum: GROUP_NAMES } },
  },
};

export const usageEndpoint: PluginEndpoint<unknown> = {
  method: 'GET',
  path: '/v1/usage',
  capability: 'usage:read',
  summary: 'Usage summed per group over a window: requests, tokens, search units and cost.',
  description: 'Query: `from`, `to` (ISO 8601 or unix seconds; default the last 30 days; the window is [from, to)), '
    + '`group_by` (comma list of model, provider, key, day, modality), `limit` (1-100, default 20) and `cursor`. An API key sees its '
    + 'own usage, a JWT caller its own, a JWT with role admin its tenant\'s. Records appear once written (within the usage '
    + 'plugin\'s flushIntervalMs).',
  errorEnvelope: 'canonical',
  responses: { '200': { description: 'A list of usage rows.', schema: usageListSchema } },
  handler({ db }) {
    return async (ctx) => {
      const caller = ctx.state.gw.caller;
      // The config keeps auth on every /v1 pipeline; without a caller there is nobody to scope the records to.
      if (!caller) throw new GatewayError('AUTH_REQUIRED', 'Authentication required');
      ctx.body = await usagePage(db, scopeFor(caller), usageQuery(ctx.query, Date.now()));
    };
  },
};
