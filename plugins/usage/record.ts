/**
 * A usage record (one per request) and the write of a batch of them into `usage_records` (migrations/), in one
 * statement whatever its size: a binary COPY where the database has it (PGlite), else one INSERT in which every
 * column goes as one array parameter. On the embedded database the recorder keeps records as their COPY rows from
 * the moment they are handed in (usageRowQueue).
 */
import type { Modality } from '../../core/canonical/chat.ts';
import type { PluginDatabase, PluginQueryable as Queryable } from '../../core/pipeline/services.ts';
import type { CopyColumnType } from '../../core/store/copy-binary.ts';
import { BinaryRowQueue, type EncodedRows, type RowCodec } from '../../core/store/copy-binary-rows.ts';

export type UsageStatus = 'completed' | 'aborted' | 'failed';

export interface UsageRecord {
  /** Made by the gateway when the record is made; a retried batch never writes a row twice. */
  id: string;
  requestId: string;
  /** When the request arrived, ms since the epoch. */
  createdAt: number;
  tenantId: string;
  organizationId: string | null;
  departmentId: string | null;
  callerKind: 'api_key' | 'jwt' | null;
  apiKeyId: string | null;
  userId: string | null;
  endpoint: string;
  /** chat, completion (the legacy endpoint), embeddings, rerank, ...; realtime for a realtime session. */
  modality: Modality | 'realtime';
  stream: boolean;
  provider: string | null;
  requestedModel: string | null;
  model: string | null;
  upstreamModel: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  /** Rerank: the search units billed; 0 for the other modalities. */
  searchUnits: number;
  /** Transcription and translation: seconds of audio heard; absent (0) for the other modalities. */
  audioSeconds?: number;
  /** Speech: characters (code points) of the input spoken; absent (0) for the other modalities. */
  characters?: number;
  /** Image generation: images made; absent (0) for the other modalities. */
  images?: number;
  /** Video generation: seconds of video made (the job's record); absent (0) for the other modalities. */
  videoSeconds?: number;
  estimated: boolean;
  costUsd: number | null;
  latencyMs: number;
  ttfbMs: number | null;
  status: UsageStatus;
  errorCode: string | null;
  /** How many requests the record stands for: 1 (the default) for one request, the line count for a batch. */
  requests?: number;
  /** Answered from a cache without calling a provider: 'hit' (exact) or 'semantic-hit'; absent otherwise. */
  cacheStatus?: 'hit' | 'semantic-hit' | null;
  /** The vector-store chunks put into the request as context (gw.retrieval), as JSON text; absent when none. */
  retrieval?: string | null;
  /** What guard plugins found (gw.guardVerdicts), as JSON text; absent when nothing. */
  guardVerdicts?: string | null;
}

/** The last time written and its text: the records of a batch mostly arrived within a few milliseconds. */
let lastTime = NaN;
let lastIso = '';
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastTime = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/**
 * Column, its SQL type, the record's field it holds, and how a record gives it (a getter of its own per column: one
 * getter reading any field by name would be a megamorphic load per value). Order is the INSERT's and the COPY's.
 */
const COLUMNS: ReadonlyArray<readonly [string, CopyColumnType, keyof UsageRecord, (r: UsageRecord) => unknown]> = [
  ['id', 'uuid', 'id', (r) => r.id],
  ['request_id', 'text', 'requestId', (r) => r.requestId],
  ['created_at', 'timestamptz', 'createdAt', (r) => r.createdAt],
  ['tenant_id', 'text', 'tenantId', (r) => r.tenantId],
  ['organization_id', 'text', 'organizationId', (r) => r.organizationId],
  ['department_id', 'text', 'departmentId', (r) => r.departmentId],
  ['caller_kind', 'text', 'callerKind', (r) => r.callerKind],
  ['api_key_id', 'text', 'apiKeyId', (r) => r.apiKeyId],
  ['user_id', 'text', 'userId', (r) => r.userId],
  ['endpoint', 'text', 'endpoint', (r) => r.endpoint],
  ['stream', 'boolean', 'stream', (r) => r.stream],
  ['provider', 'text', 'provider', (r) => r.provider],
  ['requested_model', 'text', 'requestedModel', (r) => r.requestedModel],
  ['model', 'text', 'model', (r) => r.model],
  ['upstream_model', 'text', 'upstreamModel', (r) => r.upstreamModel],
  ['prompt_tokens', 'bigint', 'promptTokens', (r) => r.promptTokens],
  ['completion_tokens', 'bigint', 'completionTokens', (r) => r.completionTokens],
  ['cached_tokens', 'bigint', 'cachedTokens', (r) => r.cachedTokens],
  ['reasoning_tokens', 'bigint', 'reasoningTokens', (r) => r.reasoningTokens],
  ['total_tokens', 'bigint', 'totalTokens', (r) => r.totalTokens],
  ['estimated', 'boolean', 'estimated', (r) => r.estimated],
  ['modality', 'text', 'modality', (r) => r.modality],
  ['search_units', 'bigint', 'searchUnits', (r) => r.searchUnits],
  ['cost_usd', 'numeric', 'costUsd', (r) => r.costUsd],
  ['latency_ms', 'float8', 'latencyMs', (r) => r.latencyMs],
  ['ttfb_ms', 'float8', 'ttfbMs', (r) => r.ttfbMs],
  ['status', 'text', 'status', (r) => r.status],
  ['error_code', 'text', 'errorCode', (r) => r.errorCode],
  ['requests', 'integer', 'requests', (r) => r.requests ?? 1],
  ['cache_status', 'text', 'cacheStatus', (r) => r.cacheStatus ?? null],
  ['retrieval', 'jsonb', 'retrieval', (r) => r.retrieval ?? null],
  ['guard_verdicts', 'jsonb', 'guardVerdicts', (r) => r.guardVerdicts ?? null],
  ['audio_seconds', 'float8', 'audioSeconds', (r) => r.audioSeconds ?? 0],
  ['characters', 'bigint', 'characters', (r) => r.characters ?? 0],
  ['images', 'bigint', 'images', (r) => r.images ?? 0],
  ['video_seconds', 'float8', 'videoSeconds', (r) => r.videoSeconds ?? 0],
];

const INSERT = `INSERT INTO usage_records (${COLUMNS.map(([name]) => name).join(', ')})
  SELECT * FROM unnest(${COLUMNS.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')})
  ON CONFLICT (id) DO NOTHING`;

const COLUMN_NAMES = COLUMNS.map(([name]) => name);
const TYPES = COLUMNS.map(([, type]) => type);
const GETTERS = COLUMNS.map(([, , , get]) => get);

/** A record's value as the INSERT's array parameter takes it: times as ISO text, costs as decimal text. */
function asParam(type: CopyColumnType, get: (r: UsageRecord) => unknown): (r: UsageRecord) => unknown {
  if (type === 'timestamptz') return (r) => isoTime(get(r) as number);
  if (type === 'numeric') return (r) => { const value = get(r); return value === null ? null : String(value); };
  return get;
}

const PARAMS = COLUMNS.map(([, type, , get]) => asParam(type, get));

/** About what one record takes in the binary stream, so that a batch's buffer seldom grows. */
const BYTES_PER_RECORD = 448;

/** Records handed in as a whole (metered work) as one binary COPY stream, encoded as the recorder's queue encodes them. */
function binaryOf(batch: readonly UsageRecord[]): Uint8Array {
  const rows = usageRowQueue(batch.length);
  for (const record of batch) rows.push(record);
  return rows.batch(batch.length).stream;
}

/** How the embedded database's queue (BinaryRowQueue) keeps records as COPY rows, and reads them back. */
export const USAGE_ROWS: RowCodec<UsageRecord> = {
  types: TYPES,
  values: GETTERS,
  record(values) {
    const record: Record<string, unknown> = {};
    for (let c = 0; c < COLUMNS.length; c++) record[COLUMNS[c]![2]] = values[c];
    return record as unknown as UsageRecord;
  },
};

/** A queue of usage records as COPY rows, sized for batches of `batchSize`. */
export function usageRowQueue(batchSize: number): BinaryRowQueue<UsageRecord> {
  return new BinaryRowQueue(USAGE_ROWS, batchSize * BYTES_PER_RECORD);
}

/** What the usage recorder writes: records, or (on the embedded database) the rows its queue encoded. */
export type UsageBatch = readonly UsageRecord[] | EncodedRows<UsageRecord>;

const UNIQUE_VIOLATION = '23505';

/** Writes a batch of either kind, as insertUsageRecords does. */
export function writeUsageBatch(db: Queryable & Pick<PluginDatabase, 'copyBinary'>, batch: UsageBatch): Promise<void> {
  if (isRecords(batch)) return insertUsageRecords(db, batch);
  return batch.count === 0 ? Promise.resolve() : copyOrInsert(db, () => batch.stream, () => batch.records());
}

function isRecords(batch: UsageBatch): batch is readonly UsageRecord[] {
  return Array.isArray(batch);
}

/**
 * Writes a batch in one statement; rows already written by an earlier attempt are skipped. COPY has no ON
 * CONFLICT: a batch whose answer was lost after it was written (a timeout) fails it on the primary key, and is
 * then written by the INSERT, which skips the rows already there.
 */
export function insertUsageRecords(db: Queryable & Pick<PluginDatabase, 'copyBinary'>, batch: readonly UsageRecord[]): Promise<void> {
  return batch.length === 0 ? Promise.resolve() : copyOrInsert(db, () => binaryOf(batch), () => batch);
}

/** The COPY where the database has one, else (or after a COPY refused on the primary key) the INSERT. */
async function copyOrInsert(
  db: Queryable & Pick<PluginDatabase, 'copyBinary'>, stream: () => Uint8Array, records: () => readonly UsageRecord[],
): Promise<void> {
  if (db.copyBinary) {
    try {
      await db.copyBinary('usage_records', COLUMN_NAMES, stream());
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
    }
  }
  const rows = records();
  await db.query(INSERT, PARAMS.map((get) => rows.map(get)));
}

const MAX_TEXT = 256;

/**
 * Text a caller chose (the requested model) goes into a batch with everyone else's records: one value Postgres
 * refuses (U+0000) would fail the batch at every retry. Such characters are dropped and long values cut.
 */
export function safeText(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  // Searched first: a replace with a global pattern costs more, and values almost never hold one.
  // eslint-disable-next-line no-control-regex
  const clean = value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
  return clean.length > MAX_TEXT ? clean.slice(0, MAX_TEXT) : clean;
}
