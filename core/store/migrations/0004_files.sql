-- The gateway's file registry: one row per file uploaded through /v1/files, mapping the gateway id
-- (`file-<uuid>`) to the provider's own file id. Deployment-wide: list, fetch and delete resolve against the
-- tenant alone; the uploading key and user are recorded for audit, not for access.
CREATE TABLE files (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  provider text NOT NULL,
  provider_file_id text NOT NULL,
  filename text NOT NULL,
  purpose text NOT NULL,
  bytes bigint NOT NULL CHECK (bytes >= 0),
  mime_type text NOT NULL,
  status text NOT NULL DEFAULT 'processed',
  metadata jsonb,
  expires_at timestamptz,
  api_key_id text,
  user_id text,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The cursor list, with and without its purpose filter (core/store/pagination.ts orders by created_at, id).
CREATE INDEX files_page ON files (tenant_id, created_at, id);
CREATE INDEX files_purpose_page ON files (tenant_id, purpose, created_at, id);
-- The expiry sweep (a job of the job runner) finds expired entries by this.
CREATE INDEX files_expiry ON files (expires_at) WHERE expires_at IS NOT NULL;
