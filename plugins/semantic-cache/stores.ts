/**
 * Where answers are kept: the KV for exact hits (one get on the hit path, no database), the plugin's table for
 * semantic hits (migrations/). Every entry carries its tenant and its expiry, checked on read with the gateway's
 * clock: an entry is never served to another tenant, nor after its TTL, whatever the store's own expiry does.
 */
import type { ChatCompletion } from '../../core/canonical/chat.ts';
import type { Clock, PluginDatabase, PluginKv } from '../../core/pipeline/services.ts';

export interface StoredEntry {
  v: 1;
  tenant: string;
  /** Answered by a provider's native completions API (a legacy prompt): its text already holds any echo. */
  native: boolean;
  /** ms since the epoch. */
  expiresAt: number;
  answer: ChatCompletion;
}

const kvKey = (exactKey: string) => `semantic-cache:${exactKey}`;

/** A parsed entry when it is one, of this tenant, and still live. */
function liveEntry(value: unknown, tenant: string, now: number): StoredEntry | null {
  const entry = value as Partial<StoredEntry> | null;
  if (!entry || typeof entry !== 'object' || entry.v !== 1 || entry.tenant !== tenant) return null;
  if (typeof entry.expiresAt !== 'number' || entry.expiresAt <= now) return null;
  if (!entry.answer || entry.answer.object !== 'chat.completion' || !Array.isArray(entry.answer.choices)) return null;
  return entry as StoredEntry;
}

export class ExactStore {
  constructor(private readonly kv: PluginKv, private readonly clock: Clock) {}

  async get(exactKey: string, tenant: string): Promise<StoredEntry | null> {
    const text = await this.kv.get(kvKey(exactKey));
    if (text === null) return null;
    try {
      return liveEntry(JSON.parse(text), tenant, this.clock.now());
    } catch {
      return null;
    }
  }

  /** `json` is the entry as text, already measured against the size bound. */
  async set(exactKey: string, entry: StoredEntry, json: string): Promise<void> {
    const ttlMs = entry.expiresAt - this.clock.now();
    if (ttlMs > 0) await this.kv.set(kvKey(exactKey), json, ttlMs);
  }
}

/** At most this many expired rows per prune: a bounded statement, never a long lock. */
const PRUNE_BATCH = 500;

/**
 * The most similar of the newest $5 live rows of a tenant's partition (the index serves the newest first: every
 * row of an entry has the same TTL). The dot product is pgvector's where the database has it (PGlite always,
 * Postgres with the extension), on the stored real[] cast per row; else a plain SQL sum over the zipped arrays,
 * about five times slower. Rows of another length (a model that changed its dimensions) are never compared.
 */
const lookup = (similarity: string) => `
  SELECT e.entry, best.similarity FROM (
    SELECT key_hash, ${similarity} AS similarity FROM (
      SELECT key_hash, embedding FROM semantic_cache_entries
      WHERE tenant_id = $1 AND partition = $2 AND expires_at > $4 AND cardinality(embedding) = cardinality($3::real[])
      ORDER BY expires_at DESC
      LIMIT $5
    ) recent
    ORDER BY similarity DESC
    LIMIT 1
  ) best JOIN semantic_cache_entries e ON e.key_hash = best.key_hash`;

/** pgvector's <#> is the negative inner product. */
const LOOKUP_PGVECTOR = lookup('-(embedding::vector <#> $3::real[]::vector)');
const LOOKUP_PLAIN = lookup('(SELECT sum(a::float8 * b::float8) FROM unnest(embedding, $3::real[]) AS t(a, b))');

const UPSERT = `
  INSERT INTO semantic_cache_entries (key_hash, tenant_id, partition, embedding, entry, created_at, expires_at)
  VALUES ($1, $2, $3, $4::real[], $5::jsonb, $6, $7)
  ON CONFLICT (key_hash) DO UPDATE SET partition = EXCLUDED.partition, embedding = EXCLUDED.embedding,
    entry = EXCLUDED.entry, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`;

const PRUNE = `
  DELETE FROM semantic_cache_entries WHERE key_hash IN (
    SELECT key_hash FROM semantic_cache_entries WHERE expires_at <= $1 LIMIT ${PRUNE_BATCH})`;

export interface SemanticMatch {
  entry: StoredEntry;
  similarity: number;
}

export class SemanticStore {
  constructor(private readonly db: PluginDatabase, private readonly clock: Clock) {}

  /** Of the newest `scanRows` live entries of the tenant and partition, the one most similar to `vector` (normalized). */
  async nearest(tenant: string, partition: string, vector: readonly number[], scanRows: number): Promise<SemanticMatch | null> {
    const now = this.clock.now();
    const sql = this.db.hasVector ? LOOKUP_PGVECTOR : LOOKUP_PLAIN;
    const rows = await this.db.query<{ entry: unknown; similarity: number | string | null }>(sql, [tenant, partition, vector, new Date(now).toISOString(), scanRows]);
    const row = rows[0];
    if (!row || row.similarity === null) return null;
    const entry = liveEntry(typeof row.entry === 'string' ? JSON.parse(row.entry) : row.entry, tenant, now);
    return entry ? { entry, similarity: Number(row.similarity) } : null;
  }

  async put(exactKey: string, partition: string, vector: readonly number[], entry: StoredEntry, json: string): Promise<void> {
    const now = this.clock.now();
    await this.db.query(UPSERT, [exactKey, entry.tenant, partition, vector, json, new Date(now).toISOString(), new Date(entry.expiresAt).toISOString()]);
  }

  /** Deletes up to PRUNE_BATCH expired rows; returns how many. */
  async prune(): Promise<number> {
    const rows = await this.db.query(`${PRUNE} RETURNING 1`, [new Date(this.clock.now()).toISOString()]);
    return rows.length;
  }
}

/** The vector scaled to length 1 (a dot product of two is then their cosine), or null for a zero or broken one. */
export function normalized(vector: readonly number[]): number[] | null {
  let sum = 0;
  for (const value of vector) {
    if (!Number.isFinite(value)) return null;
    sum += value * value;
  }
  if (sum === 0) return null;
  const length = Math.sqrt(sum);
  return vector.map((value) => value / length);
}
