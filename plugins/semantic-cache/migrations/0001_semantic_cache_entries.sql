-- The semantic-cache plugin's stored answers for semantic hits (exact hits live in the KV). One row per distinct
-- request (key_hash: the exact key, which holds the tenant), written again when the same request is answered
-- again. A lookup scans the newest live rows of one tenant and partition (the hash of everything in the exact key
-- but the conversation) for the best dot product of the normalized embeddings: an exact scan, served by the index
-- below; pgvector computes the products where the database has it, plain SQL otherwise, so the table needs no
-- extension. Expired rows are skipped by every lookup and deleted by the plugin in bounded batches.
CREATE TABLE IF NOT EXISTS semantic_cache_entries (
  key_hash text PRIMARY KEY,
  tenant_id text NOT NULL,
  partition text NOT NULL,
  -- The conversation's embedding, normalized to length 1: a dot product is the cosine similarity.
  embedding real[] NOT NULL,
  -- {v, tenant, native, expiresAt, answer}: the canonical ChatCompletion, replayed as a result or a stream.
  entry jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS semantic_cache_entries_lookup ON semantic_cache_entries (tenant_id, partition, expires_at);
CREATE INDEX IF NOT EXISTS semantic_cache_entries_expiry ON semantic_cache_entries (expires_at);
