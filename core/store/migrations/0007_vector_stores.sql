-- Gateway-owned vector stores (`vs-<uuid>`): the files attached to each, and the chunks their text was cut into,
-- embedded with the store's embedding model. Read by tenant; a store past its expires_at is gone for every reader
-- and the expiry sweep deletes it with everything below it.
CREATE TABLE vector_stores (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  name text NOT NULL,
  embedding_model text NOT NULL,
  status text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed')),
  -- The length of the store's embeddings, set by its first chunks: every later chunk and query must match it.
  dims integer CHECK (dims > 0),
  metadata jsonb,
  expires_at timestamptz,
  api_key_id text,
  user_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The cursor list (core/store/pagination.ts orders by created_at, id), and the expiry sweep.
CREATE INDEX vector_stores_page ON vector_stores (tenant_id, created_at, id);
CREATE INDEX vector_stores_expiry ON vector_stores (expires_at) WHERE expires_at IS NOT NULL;

-- One row per gateway file attached to a store; attaching a file again changes nothing.
CREATE TABLE vector_store_files (
  store_id text NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
  file_id text NOT NULL,
  status text NOT NULL DEFAULT 'in_progress' CHECK (status IN ('in_progress', 'completed', 'skipped', 'failed')),
  -- Why a file was skipped or failed (shown to the operator; the caller sees the status).
  warning text,
  chunk_count integer NOT NULL DEFAULT 0 CHECK (chunk_count >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (store_id, file_id)
);

-- Chunks are addressed by their store, file and position; tenant_id and expires_at are copies of the store's, so
-- that a search filters on the chunk rows alone.
CREATE TABLE vector_store_chunks (
  store_id text NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
  tenant_id text NOT NULL,
  file_id text NOT NULL,
  document_id text NOT NULL,
  chunk_index integer NOT NULL CHECK (chunk_index >= 0),
  content text NOT NULL,
  dims integer NOT NULL CHECK (dims > 0),
  expires_at timestamptz,
  PRIMARY KEY (store_id, file_id, chunk_index)
);
CREATE INDEX vector_store_chunks_expiry ON vector_store_chunks (expires_at) WHERE expires_at IS NOT NULL;

-- The embedding, L2-normalized so that cosine similarity is a dot product. With pgvector (always in PGlite; on a
-- server when CREATE EXTENSION vector succeeded at open) a `vector` without a fixed length: per-length HNSW
-- indexes are created when chunks of a new length first arrive (core/store/vectors.ts). Without it `real[]`,
-- searched by an exact scan. A database migrated before pgvector was installed keeps real[]: the code reads the
-- column's type, never assumes it.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
    ALTER TABLE vector_store_chunks ADD COLUMN embedding vector NOT NULL;
  ELSE
    ALTER TABLE vector_store_chunks ADD COLUMN embedding real[] NOT NULL;
  END IF;
END $$;

-- The exact scan's score on real[] embeddings: the dot product, summed in double precision.
CREATE FUNCTION aigw_vector_dot(a real[], b real[]) RETURNS double precision
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT sum(x::double precision * y::double precision) FROM unnest(a, b) AS pair (x, y) $$;

-- A store with its file counts and chunk count, as every reader shows it (counted from the file rows, so a
-- store's chunks are never scanned to answer a fetch or a list).
CREATE VIEW vector_store_summaries AS
SELECT s.*, c.files_total, c.files_in_progress, c.files_completed, c.files_skipped, c.files_failed, c.chunk_count
FROM vector_stores s
CROSS JOIN LATERAL (
  SELECT count(*)::integer AS files_total,
    (count(*) FILTER (WHERE f.status = 'in_progress'))::integer AS files_in_progress,
    (count(*) FILTER (WHERE f.status = 'completed'))::integer AS files_completed,
    (count(*) FILTER (WHERE f.status = 'skipped'))::integer AS files_skipped,
    (count(*) FILTER (WHERE f.status = 'failed'))::integer AS files_failed,
    COALESCE(sum(f.chunk_count), 0)::bigint AS chunk_count
  FROM vector_store_files f WHERE f.store_id = s.id
) c;
