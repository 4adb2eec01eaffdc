-- Batches submitted through /v1/batches: the gateway id (`batch-<uuid>`), the provider's batch it names, its
-- status as polling last saw it, and who submitted it (for settlement). Listed and fetched by tenant.
CREATE TABLE batches (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants (id),
  provider text NOT NULL,
  provider_batch_id text NOT NULL,
  endpoint text NOT NULL,
  status text NOT NULL CHECK (status IN ('validating', 'in_progress', 'completed', 'failed', 'cancelled', 'expired')),
  request_counts jsonb NOT NULL,
  metadata jsonb,
  -- Gateway file ids of the results, set at a terminal state (null when the provider's results are no file).
  output_file_id text,
  error_file_id text,
  -- The completion webhook: the secret signs every delivery, and is returned to the caller once, at submit.
  webhook_url text,
  webhook_secret text,
  caller_kind text NOT NULL CHECK (caller_kind IN ('api_key', 'jwt')),
  api_key_id text,
  user_id text,
  organization_id text,
  department_id text,
  -- For settlement: the model the first request line named, and the configured model it resolved to.
  requested_model text,
  model text,
  cancel_requested_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The cursor list (core/store/pagination.ts orders by created_at, id).
CREATE INDEX batches_page ON batches (tenant_id, created_at, id);
