-- The audit log: one row per record, chained. `content` is the record's canonical JSON (sorted keys) exactly as
-- hashed; hash = sha256(prev_hash || content). The other columns copy fields of `content` for filtering; the
-- verifier checks that they agree with it.
CREATE TABLE IF NOT EXISTS audit_records (
  seq bigint PRIMARY KEY,
  id uuid NOT NULL UNIQUE,
  kind text NOT NULL,
  occurred_at timestamptz NOT NULL,
  request_id text,
  tenant_id text,
  api_key_id text,
  route text,
  status integer,
  content text NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_records_occurred_at ON audit_records (occurred_at);
CREATE INDEX IF NOT EXISTS audit_records_tenant ON audit_records (tenant_id, seq);
CREATE INDEX IF NOT EXISTS audit_records_request ON audit_records (request_id);

-- The chain's head (last seq and hash), updated in the same transaction as the rows: deleting the newest records
-- shows as a gap between the rows and the head.
CREATE TABLE IF NOT EXISTS audit_head (
  id integer PRIMARY KEY CHECK (id = 1),
  seq bigint NOT NULL,
  hash text NOT NULL
);

-- Pruning leaves a checkpoint: the last pruned record's seq and hash, signed (HMAC-SHA256 under checkpointKey),
-- from which verification starts.
CREATE TABLE IF NOT EXISTS audit_checkpoints (
  id bigserial PRIMARY KEY,
  seq bigint NOT NULL,
  hash text NOT NULL,
  created_at timestamptz NOT NULL,
  pruned bigint NOT NULL,
  signature text NOT NULL
);
